//! The traits behind the generated method tables, and the errors of method routing.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

/// A request's params type: its wire method and the type of its successful result.
pub trait Request: Serialize + DeserializeOwned {
    /// The JSON-RPC method name, e.g. `"session/prompt"`.
    const METHOD: &'static str;
    /// The result type of a successful response.
    type Response: Serialize + DeserializeOwned;
}

/// A notification's params type and its wire method.
pub trait Notification: Serialize + DeserializeOwned {
    /// The JSON-RPC method name, e.g. `"session/update"`.
    const METHOD: &'static str;
}

/// A generated envelope (`ClientRequest`, `AgentNotification`, `ClientResponse` ...): the
/// messages one side sends, routed by method. Lets a transport decode raw params without knowing
/// which envelope it holds.
pub trait Routed: Sized + Serialize {
    /// Decodes the params (or, for responses, the result) of `method`.
    fn route(method: &str, payload: Option<&RawValue>) -> Result<Self, MethodDecodeError>;
    /// The wire method name.
    fn method(&self) -> &str;
}

/// Why a method and its params could not be turned into a typed message.
#[derive(Debug, thiserror::Error)]
pub enum MethodDecodeError {
    /// No method of this name is known on this side (JSON-RPC `-32601`).
    #[error("method not found: `{method}`")]
    UnknownMethod {
        /// The method name as received.
        method: String,
    },
    /// The method is known but its params (or result) do not match the schema (JSON-RPC `-32602`).
    #[error("invalid params for `{method}` at `{path}`: {source}")]
    InvalidParams {
        /// The method name.
        method: String,
        /// Where in the params the mismatch is, e.g. `prompt[0].text` (`.` for the top level).
        path: String,
        /// What serde reported.
        #[source]
        source: serde_json::Error,
    },
}

impl MethodDecodeError {
    /// The JSON-RPC error code this maps to: `-32601` or `-32602`.
    pub fn code(&self) -> i32 {
        match self {
            MethodDecodeError::UnknownMethod { .. } => -32601,
            MethodDecodeError::InvalidParams { .. } => -32602,
        }
    }
}

/// Decodes the params (or result) of `method` into `T`. Missing params decode as `{}`.
pub fn decode<T: DeserializeOwned>(
    method: &str,
    params: Option<&RawValue>,
) -> Result<T, MethodDecodeError> {
    decode_json(params.map_or("{}", RawValue::get)).map_err(|(path, source)| {
        MethodDecodeError::InvalidParams {
            method: method.to_owned(),
            path,
            source,
        }
    })
}

/// Decodes JSON text into `T`; an error comes with the path of the offending value
/// (`prompt[0].text`, `.` for the top level), found from the error's position once decoding has
/// failed, so a message that decodes pays nothing for it.
pub fn decode_json<T: DeserializeOwned>(text: &str) -> Result<T, (String, serde_json::Error)> {
    serde_json::from_str(text).map_err(|err| (crate::error_path::at(text, &err), err))
}

/// A message for an extension method (`_`-prefixed) with its params kept as raw JSON.
#[derive(Debug, Clone)]
pub struct ExtMessage {
    /// The method name, e.g. `"_acme/refresh"`.
    pub method: String,
    /// The params (or result) exactly as received.
    pub params: Option<Box<RawValue>>,
}

impl ExtMessage {
    /// Keeps `method` and its raw params. `null` params are no params (JSON-RPC params are an
    /// object or an array), so an extension message without params encodes as `null` and decodes
    /// back without params, as it was.
    pub fn new(method: &str, params: Option<&RawValue>) -> Self {
        Self {
            method: method.to_owned(),
            params: params.filter(|p| p.get() != "null").map(RawValue::to_owned),
        }
    }
}

impl PartialEq for ExtMessage {
    fn eq(&self, other: &Self) -> bool {
        self.method == other.method
            && self.params.as_deref().map(RawValue::get)
                == other.params.as_deref().map(RawValue::get)
    }
}

impl Serialize for ExtMessage {
    /// Serialises the params (`null` when there are none).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(serializer)
    }
}
