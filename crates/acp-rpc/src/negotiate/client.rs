//! The client side of the handshake: one `initialize` carrying what the client offers for each
//! version, the answer decoded by the version the agent chose.

use serde_json::{Map, Value};

use super::VersionOnly;
use crate::connection::Connection;
use crate::error::Error;

/// What a client sends in `initialize` for each version it speaks.
///
/// The request asks for the highest version offered; the members of every offered version go in
/// the one request (v1's `clientInfo` and `clientCapabilities` beside v2's `info` and
/// `capabilities`; where both name a member, the higher version's wins), so a v1 agent reads real
/// v1 params and a v2 agent real v2 params.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Offer {
    /// The v1 params, if the client speaks v1.
    #[cfg(feature = "v1")]
    pub v1: Option<acp_v1::InitializeRequest>,
    /// The v2 params, if the client speaks v2.
    #[cfg(feature = "v2")]
    pub v2: Option<acp_v2::InitializeRequest>,
}

impl Offer {
    /// Offers nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also offers v1 with these params.
    #[cfg(feature = "v1")]
    #[must_use]
    pub fn v1(mut self, request: acp_v1::InitializeRequest) -> Self {
        self.v1 = Some(request);
        self
    }

    /// Also offers v2 with these params.
    #[cfg(feature = "v2")]
    #[must_use]
    pub fn v2(mut self, request: acp_v2::InitializeRequest) -> Self {
        self.v2 = Some(request);
        self
    }

    /// The params of the one `initialize` request: every offered version's members, highest
    /// version first, asking for the highest version's `protocolVersion`.
    pub fn params(&self) -> Result<Value, Error> {
        let mut merged = Map::new();
        let mut offered: Vec<Value> = Vec::new();
        #[cfg(feature = "v2")]
        if let Some(v2) = &self.v2 {
            offered.push(serde_json::to_value(v2).map_err(Error::Encode)?);
        }
        #[cfg(feature = "v1")]
        if let Some(v1) = &self.v1 {
            offered.push(serde_json::to_value(v1).map_err(Error::Encode)?);
        }
        if offered.is_empty() {
            return Err(Error::Usage("an `initialize` offer needs a version".into()));
        }
        for params in offered {
            if let Value::Object(members) = params {
                for (key, value) in members {
                    merged.entry(key).or_insert(value);
                }
            }
        }
        Ok(Value::Object(merged))
    }
}

#[cfg(feature = "v2")]
impl From<acp_v2::InitializeRequest> for Offer {
    fn from(request: acp_v2::InitializeRequest) -> Self {
        Offer::new().v2(request)
    }
}

#[cfg(feature = "v2")]
impl From<&acp_v2::InitializeRequest> for Offer {
    fn from(request: &acp_v2::InitializeRequest) -> Self {
        Offer::new().v2(request.clone())
    }
}

#[cfg(feature = "v1")]
impl From<acp_v1::InitializeRequest> for Offer {
    fn from(request: acp_v1::InitializeRequest) -> Self {
        Offer::new().v1(request)
    }
}

#[cfg(feature = "v1")]
impl From<&acp_v1::InitializeRequest> for Offer {
    fn from(request: &acp_v1::InitializeRequest) -> Self {
        Offer::new().v1(request.clone())
    }
}

/// The agent's answer to `initialize`, typed by the version it chose.
// Made once per connection and read in place: the size difference between the two versions'
// answers (which depends on the models' features) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Negotiated {
    /// The agent speaks v1 on this connection.
    #[cfg(feature = "v1")]
    V1(acp_v1::InitializeResponse),
    /// The agent speaks v2 on this connection.
    #[cfg(feature = "v2")]
    V2(acp_v2::InitializeResponse),
}

impl Negotiated {
    /// The negotiated protocol version.
    pub fn version(&self) -> u16 {
        match self {
            #[cfg(feature = "v1")]
            Negotiated::V1(_) => 1,
            #[cfg(feature = "v2")]
            Negotiated::V2(_) => 2,
        }
    }
}

/// Client side: sends `initialize` with what `offer` holds and decodes the answer with the surface
/// of the version the agent chose, which is then recorded on the connection. A version this build
/// cannot speak is [`Error::Protocol`].
pub async fn initialize(
    connection: &Connection,
    offer: impl Into<Offer>,
) -> Result<Negotiated, Error> {
    let params = offer.into().params()?;
    let raw = connection
        .request_raw(
            super::INITIALIZE,
            Some(serde_json::value::to_raw_value(&params).map_err(Error::Encode)?),
            Default::default(),
        )
        .await?;
    let VersionOnly { protocol_version } =
        serde_json::from_str(raw.get()).map_err(Error::InvalidResult)?;
    let negotiated = match protocol_version {
        #[cfg(feature = "v1")]
        1 => serde_json::from_str(raw.get())
            .map(Negotiated::V1)
            .map_err(Error::InvalidResult)?,
        #[cfg(feature = "v2")]
        2 => serde_json::from_str(raw.get())
            .map(Negotiated::V2)
            .map_err(Error::InvalidResult)?,
        other => {
            return Err(Error::Protocol(format!(
                "the agent chose protocol version {other}, which this client cannot speak"
            )))
        }
    };
    connection.set_protocol_version(protocol_version);
    Ok(negotiated)
}
