//! A permission question about a tool call, in terms either version can carry, and the
//! decision its answer stands for.

use super::tool::ToolCallPatch;

/// What an option of a permission question means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChoiceKind {
    /// Allow this once.
    AllowOnce,
    /// Allow from now on.
    AllowAlways,
    /// Refuse this once.
    RejectOnce,
    /// Refuse from now on.
    RejectAlways,
}

impl ChoiceKind {
    /// `true` for the allowing kinds.
    pub fn allows(self) -> bool {
        matches!(self, ChoiceKind::AllowOnce | ChoiceKind::AllowAlways)
    }
}

/// One option of a permission question.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Choice {
    /// Its id, unique in the question.
    pub id: String,
    /// Its label.
    pub name: String,
    /// What it means.
    pub kind: ChoiceKind,
}

impl Choice {
    /// Option `id`, labelled `name`, meaning `kind`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, kind: ChoiceKind) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            kind,
        }
    }
}

/// A permission question about a tool call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PermissionAsk {
    /// The question, for people (v2 carries it; v1 shows the tool call's title).
    pub title: String,
    /// Why permission is needed (v2).
    pub description: Option<String>,
    /// The tool call it is about, as it should be shown (the client applies it).
    pub tool_call: ToolCallPatch,
    /// The options offered.
    pub options: Vec<Choice>,
}

impl PermissionAsk {
    /// A question titled `title` about `tool_call`, offering `options`.
    pub fn new(title: impl Into<String>, tool_call: ToolCallPatch, options: Vec<Choice>) -> Self {
        Self {
            title: title.into(),
            description: None,
            tool_call,
            options,
        }
    }

    /// Sets why permission is needed.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The decision an answer selecting `option_id` stands for: approval only for an offered
    /// allowing option; any other id is a refusal.
    pub fn decide(&self, option_id: &str) -> Decision {
        match self.options.iter().find(|choice| choice.id == option_id) {
            Some(choice) if choice.kind.allows() => Decision::Allowed,
            _ => Decision::Rejected,
        }
    }
}

/// What the answer to a [`PermissionAsk`] means for the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// An allowing option was selected.
    Allowed,
    /// Anything that is not approval: a refusing option, an unknown one, an outcome this build
    /// does not know.
    Rejected,
    /// The question was cancelled (the turn was cancelled, or the user dismissed it).
    Cancelled,
}
