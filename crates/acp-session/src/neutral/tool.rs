//! Tool calls, their content and agent-owned terminals, in terms either version can carry.

/// The category of a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolKind {
    /// Reading files or data.
    Read,
    /// Modifying files.
    Edit,
    /// Removing files.
    Delete,
    /// Moving or renaming files.
    Move,
    /// Searching.
    Search,
    /// Running a command.
    Execute,
    /// Thinking or planning.
    Think,
    /// Fetching from the network.
    Fetch,
    /// Anything else.
    Other,
}

/// The status of a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolStatus {
    /// Not started (awaiting permission, say).
    Pending,
    /// Running.
    InProgress,
    /// Finished successfully.
    Completed,
    /// Finished with an error.
    Failed,
    /// Stopped before it completed (cancelled, or not permitted). v1 has no such status: it
    /// goes as `failed`.
    Cancelled,
}

/// A file change shown as a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileDiff {
    /// The absolute path of the file.
    pub path: String,
    /// Its text before (`None` for a new file).
    pub old_text: Option<String>,
    /// Its text after.
    pub new_text: String,
    /// The same change as patch text in Git's format (v2 carries it; v1 has the texts only).
    pub patch: String,
}

impl FileDiff {
    /// A change of `path` from `old_text` (`None`: a new file) to `new_text`, with its patch.
    pub fn new(
        path: impl Into<String>,
        old_text: Option<String>,
        new_text: impl Into<String>,
        patch: impl Into<String>,
    ) -> Self {
        Self {
            path: path.into(),
            old_text,
            new_text: new_text.into(),
            patch: patch.into(),
        }
    }
}

/// One item of tool call content.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolContent {
    /// Text.
    Text(String),
    /// A file change.
    Diff(FileDiff),
    /// An agent-owned terminal, by id ([`TerminalInfo`]): v2 embeds it, v1 (whose terminals
    /// are the client's) shows it as text: the command, its output so far, its exit.
    Terminal(String),
}

/// A tool call created or changed: `None` fields stay as they are.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolCallPatch {
    /// The tool call's id, unique in the session.
    pub id: String,
    /// What it does, for people.
    pub title: Option<String>,
    /// Its category.
    pub kind: Option<ToolKind>,
    /// Its status.
    pub status: Option<ToolStatus>,
    /// Its content, replacing what was there.
    pub content: Option<Vec<ToolContent>>,
    /// The absolute paths it touches ("follow along" in an editor).
    pub locations: Option<Vec<String>>,
    /// Its raw input.
    pub raw_input: Option<serde_json::Value>,
    /// Its raw output.
    pub raw_output: Option<serde_json::Value>,
}

impl ToolCallPatch {
    /// A patch of tool call `id` that changes nothing yet.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            ..Self::default()
        }
    }

    /// Sets the title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the kind.
    #[must_use]
    pub fn kind(mut self, kind: ToolKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// Sets the status.
    #[must_use]
    pub fn status(mut self, status: ToolStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// Replaces the content.
    #[must_use]
    pub fn content(mut self, content: Vec<ToolContent>) -> Self {
        self.content = Some(content);
        self
    }

    /// Sets the locations.
    #[must_use]
    pub fn locations(mut self, locations: Vec<String>) -> Self {
        self.locations = Some(locations);
        self
    }

    /// Sets the raw input.
    #[must_use]
    pub fn raw_input(mut self, raw: serde_json::Value) -> Self {
        self.raw_input = Some(raw);
        self
    }

    /// Sets the raw output.
    #[must_use]
    pub fn raw_output(mut self, raw: serde_json::Value) -> Self {
        self.raw_output = Some(raw);
        self
    }
}

/// How a terminal's command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Exit {
    /// The exit code, when it exited normally.
    pub code: Option<i64>,
    /// The signal that stopped it, e.g. `SIGINT`.
    pub signal: Option<String>,
}

impl Exit {
    /// An exit with `code`.
    pub fn code(code: i64) -> Self {
        Self {
            code: Some(code),
            signal: None,
        }
    }

    /// A stop by `signal`.
    pub fn signal(signal: impl Into<String>) -> Self {
        Self {
            code: None,
            signal: Some(signal.into()),
        }
    }
}

/// An agent-owned display terminal created or changed: `None` fields stay as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TerminalInfo {
    /// Its id, unique in the session.
    pub id: String,
    /// The command shown.
    pub command: Option<String>,
    /// The command's absolute working directory.
    pub cwd: Option<String>,
    /// Set once the command has ended.
    pub exit: Option<Exit>,
}

impl TerminalInfo {
    /// Terminal `id`, nothing set yet.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            command: None,
            cwd: None,
            exit: None,
        }
    }

    /// Sets the command.
    #[must_use]
    pub fn command(mut self, command: impl Into<String>) -> Self {
        self.command = Some(command.into());
        self
    }

    /// Sets the working directory.
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Sets how it ended.
    #[must_use]
    pub fn exit(mut self, exit: Exit) -> Self {
        self.exit = Some(exit);
        self
    }
}
