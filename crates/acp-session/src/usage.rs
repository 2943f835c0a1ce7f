//! The last context and cost report (`usage_update`), as both reducers keep it: strictly decoded
//! reports as they are, and reports whose numbers an agent sent as `null` read leniently.
//!
//! claude-agent-acp sends `"used": null` on every turn; the schema wants a number, so the strict
//! decode refuses the whole update and the context size and cost never reach the state. Here a
//! `null` (or missing) `used` / `size` is read as "not known", the rest of the report is kept,
//! and the reducer notes it once per session.

use acp_support::{Meta, Patch};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// The last context and cost report. `C` is the protocol version's `Cost`.
///
/// See protocol docs: [Session usage updates](https://agentclientprotocol.com/protocol/v1/prompt-turn#session-usage-updates)
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Usage<C> {
    /// Tokens currently in context; `None` when the agent sent no number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used: Option<u64>,
    /// The context window's size in tokens; `None` when the agent sent no number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The session's cumulative cost, as last reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<C>,
    /// The report's `_meta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl<C> Default for Usage<C> {
    fn default() -> Self {
        Self {
            used: None,
            size: None,
            cost: None,
            meta: None,
        }
    }
}

/// How a report's `cost` changes the kept one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CostRule {
    /// v1: each report carries the whole cost (omitted means none).
    Replace,
    /// v2: omitted leaves the last cost, `null` clears it, a value replaces it.
    Patch,
}

impl<C> Usage<C> {
    /// Folds in one report: numbers and `_meta` replace the kept ones, the cost per `rule`.
    pub(crate) fn fold(
        previous: Option<Self>,
        used: Option<u64>,
        size: Option<u64>,
        cost: Patch<C>,
        meta: Option<Meta>,
        rule: CostRule,
    ) -> Self {
        let kept_cost = previous.and_then(|usage| usage.cost);
        let cost = match (rule, cost) {
            (CostRule::Patch, Patch::Absent) => kept_cost,
            (_, cost) => cost.into_option(),
        };
        Self {
            used,
            size,
            cost,
            meta,
        }
    }
}

/// A `usage_update` that did not decode strictly, read field by field.
pub(crate) struct LenientReport<C> {
    pub(crate) used: Option<u64>,
    pub(crate) size: Option<u64>,
    pub(crate) cost: Patch<C>,
    pub(crate) meta: Option<Meta>,
    /// The numbers that were `null` or missing, for the note.
    pub(crate) unknown: Vec<&'static str>,
}

/// Reads `update` as a `usage_update` whose only faults are numbers that are `null` or
/// missing; `None` when it is another kind, or anything else is wrong (a number of the wrong
/// type, a cost that does not decode): that stays a problem.
pub(crate) fn lenient<C: DeserializeOwned>(update: &Value) -> Option<LenientReport<C>> {
    let object = update.as_object()?;
    if object.get("sessionUpdate")?.as_str()? != "usage_update" {
        return None;
    }
    let mut unknown = Vec::new();
    let mut number = |name: &'static str| match object.get(name) {
        None | Some(Value::Null) => {
            unknown.push(name);
            Some(None)
        }
        Some(value) => value.as_u64().map(Some),
    };
    let used = number("used")?;
    let size = number("size")?;
    if unknown.is_empty() {
        // Both numbers are fine: the fault is elsewhere.
        return None;
    }
    let cost = match object.get("cost") {
        None => Patch::Absent,
        Some(Value::Null) => Patch::Null,
        Some(cost) => Patch::Value(serde_json::from_value(cost.clone()).ok()?),
    };
    let meta = match object.get("_meta") {
        None | Some(Value::Null) => None,
        Some(meta) => Some(serde_json::from_value(meta.clone()).ok()?),
    };
    Some(LenientReport {
        used,
        size,
        cost,
        meta,
        unknown,
    })
}

/// The note a reducer records the first time it reads a report leniently.
pub(crate) fn note(unknown: &[&'static str]) -> String {
    let fields = unknown
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(" and ");
    format!(
        "`usage_update` with {fields} null or missing (the schema wants a number): read as \
         unknown and the rest of the report kept; later reports like it are read the same way \
         without a note"
    )
}

/// What a reducer keeps of usage: the report, and whether the lenient reading was noted.
pub(crate) struct Kept<'a, C> {
    pub(crate) usage: &'a mut Option<Usage<C>>,
    pub(crate) noted: &'a mut bool,
    pub(crate) problems: &'a mut Vec<String>,
}

/// Folds `update` in leniently when it is a `usage_update` whose only fault is a `null` (or
/// missing) number, noting it the first time; `None` when it is not one.
pub(crate) fn fold_lenient<C: DeserializeOwned>(
    kept: Kept<'_, C>,
    update: &Value,
    rule: CostRule,
) -> Option<crate::Rejection> {
    let report = lenient::<C>(update)?;
    let noted = !*kept.noted;
    if noted {
        *kept.noted = true;
        kept.problems.push(note(&report.unknown));
    }
    *kept.usage = Some(Usage::fold(
        kept.usage.take(),
        report.used,
        report.size,
        report.cost,
        report.meta,
        rule,
    ));
    Some(crate::Rejection::Lenient { noted })
}
