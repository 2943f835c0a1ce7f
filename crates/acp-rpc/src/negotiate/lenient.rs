//! Lenient decoding of what a newer peer sent: members that do not parse are dropped, required
//! members it left out are filled with a stated default, so the message can be read as the
//! version this side speaks. Used for `initialize` from a client that asked for a newer version
//! than is served: it must be able to fall back, so its request is never `-32602` for a shape
//! this side does not know.

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::RpcError;

/// How many members may be dropped or filled before giving up.
const MAX_REPAIRS: usize = 256;

/// A required member to fill when missing: its path (`["info"]`) and its value.
pub type Fill = (&'static [&'static str], fn() -> Value);

/// `params` made to decode as `T`: each member the decoder rejects is dropped, each missing
/// member listed in `defaults` is filled. What is still missing after that, or params that are
/// not an object, is `-32602` naming the field.
pub fn repair<T: DeserializeOwned>(
    params: Option<&RawValue>,
    defaults: &[Fill],
) -> Result<Box<RawValue>, RpcError> {
    let mut value: Value = match params {
        Some(raw) => serde_json::from_str(raw.get()).map_err(RpcError::invalid_params)?,
        None => Value::Object(Map::new()),
    };
    if !value.is_object() {
        return Err(crate::handler::by_position());
    }
    for _ in 0..MAX_REPAIRS {
        let err = match serde_path_to_error::deserialize::<_, T>(&value) {
            Ok(_) => {
                return serde_json::value::to_raw_value(&value).map_err(RpcError::internal_error)
            }
            Err(err) => err,
        };
        let path = members(err.path());
        let detail = err.inner().to_string();
        let repaired = match missing_field(&detail) {
            Some(field) => {
                let mut at = path.clone();
                at.push(Step::Key(field.to_owned()));
                fill(&mut value, &at, defaults)
            }
            None => drop_at(&mut value, &path),
        };
        if !repaired {
            return Err(RpcError::invalid_params(format!(
                "at `{}`: {detail}",
                err.path()
            )));
        }
        tracing::debug!(path = %err.path(), %detail, "repaired a newer peer's params");
    }
    Err(RpcError::invalid_params(
        "too many members that do not parse",
    ))
}

/// v1's or v2's `InitializeRequest` params from a client that asked for a newer version.
pub fn initialize_params(
    version: u16,
    params: Option<&RawValue>,
) -> Result<Box<RawValue>, RpcError> {
    match version {
        #[cfg(feature = "v2")]
        2 => repair::<acp_v2::InitializeRequest>(
            params,
            &[(
                &["info"],
                || serde_json::json!({ "name": "unknown", "version": "unknown" }),
            )],
        ),
        #[cfg(feature = "v1")]
        1 => repair::<acp_v1::InitializeRequest>(params, &[]),
        _ => params
            .map(ToOwned::to_owned)
            .ok_or_else(|| RpcError::invalid_params("`initialize` needs params")),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// The path as object keys and array indices (enum and unknown segments name no member).
fn members(path: &serde_path_to_error::Path) -> Vec<Step> {
    path.iter()
        .filter_map(|segment| match segment {
            serde_path_to_error::Segment::Map { key } => Some(Step::Key(key.clone())),
            serde_path_to_error::Segment::Seq { index } => Some(Step::Index(*index)),
            _ => None,
        })
        .collect()
}

/// serde's "missing field `name`".
fn missing_field(detail: &str) -> Option<&str> {
    let rest = detail.strip_prefix("missing field `")?;
    rest.split('`').next()
}

fn fill(value: &mut Value, at: &[Step], defaults: &[Fill]) -> bool {
    let Some((path, make)) = defaults.iter().find(|(path, _)| {
        path.len() == at.len()
            && path
                .iter()
                .zip(at)
                .all(|(want, got)| matches!(got, Step::Key(key) if key == want))
    }) else {
        return false;
    };
    let Some((last, parent)) = path.split_last() else {
        return false;
    };
    let mut target = value;
    for key in parent {
        match target.get_mut(*key) {
            Some(next) => target = next,
            None => return false,
        }
    }
    match target.as_object_mut() {
        Some(object) if !object.contains_key(*last) => {
            object.insert((*last).to_owned(), make());
            true
        }
        _ => false,
    }
}

/// Removes the member at `at`; the root cannot be removed.
fn drop_at(value: &mut Value, at: &[Step]) -> bool {
    let Some((last, parent)) = at.split_last() else {
        return false;
    };
    let mut target = value;
    for step in parent {
        let next = match step {
            Step::Key(key) => target.get_mut(key.as_str()),
            Step::Index(index) => target.get_mut(*index),
        };
        match next {
            Some(next) => target = next,
            None => return false,
        }
    }
    match (target, last) {
        (Value::Object(object), Step::Key(key)) => object.shift_remove(key).is_some(),
        (Value::Array(items), Step::Index(index)) if *index < items.len() => {
            items.remove(*index);
            true
        }
        _ => false,
    }
}

#[cfg(all(test, feature = "v2"))]
mod tests {
    use super::*;

    #[test]
    fn a_v1_shaped_request_for_version_3_reads_as_v2() {
        let params = RawValue::from_string(
            serde_json::json!({
                "protocolVersion": 3,
                "clientInfo": {"name": "future", "version": "9"},
                "capabilities": {"session": 7, "future": {"x": 1}},
            })
            .to_string(),
        )
        .expect("json");
        let repaired = initialize_params(2, Some(&params)).expect("repaired");
        let request: acp_v2::InitializeRequest =
            serde_json::from_str(repaired.get()).expect("decodes");
        assert_eq!(request.info.name, "unknown");
        assert_eq!(request.protocol_version, acp_v2::ProtocolVersion(3));
    }

    #[test]
    fn params_that_are_not_an_object_are_refused() {
        let params = RawValue::from_string("[3]".into()).expect("json");
        assert_eq!(
            initialize_params(2, Some(&params)).expect_err("array").code,
            crate::codes::INVALID_PARAMS
        );
    }
}
