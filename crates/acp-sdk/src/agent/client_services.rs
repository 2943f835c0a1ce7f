//! What a v1 client offers the agent during a turn: its file system (`fs/*`) and its terminals
//! (`terminal/*`), each as far as the client advertised it in `initialize`. A method it did not
//! advertise fails with [`Error::Usage`] before anything is sent.

use std::path::Path;

use acp_rpc::{Connection, Error};

/// A v1 client's file system, as far as it advertised it (`fs.readTextFile`,
/// `fs.writeTextFile`). A method it did not advertise fails with [`Error::Usage`] before anything
/// is sent.
#[derive(Debug, Clone)]
pub struct ClientFs {
    pub(crate) connection: Connection,
    pub(crate) session_id: String,
    pub(crate) read: bool,
    pub(crate) write: bool,
}

impl ClientFs {
    /// `true` when the client reads files for the agent.
    pub fn can_read(&self) -> bool {
        self.read
    }

    /// `true` when the client writes files for the agent.
    pub fn can_write(&self) -> bool {
        self.write
    }

    /// `fs/read_text_file`: the file's text (as the client's editor has it, unsaved changes
    /// included), from 1-based `line`, at most `limit` lines.
    pub async fn read_text_file(
        &self,
        path: &Path,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, Error> {
        if !self.read {
            return Err(Error::Usage(
                "the client did not advertise `fs.readTextFile`".into(),
            ));
        }
        let mut request = acp_v1::ReadTextFileRequest::new(
            self.session_id.as_str(),
            path.to_string_lossy().into_owned(),
        );
        if let Some(line) = line {
            request = request.line(line);
        }
        if let Some(limit) = limit {
            request = request.limit(limit);
        }
        Ok(self.connection.request(&request).await?.content)
    }

    /// `fs/write_text_file`: writes `content` to the file.
    pub async fn write_text_file(
        &self,
        path: &Path,
        content: impl Into<String>,
    ) -> Result<(), Error> {
        if !self.write {
            return Err(Error::Usage(
                "the client did not advertise `fs.writeTextFile`".into(),
            ));
        }
        let request = acp_v1::WriteTextFileRequest::new(
            self.session_id.as_str(),
            path.to_string_lossy().into_owned(),
            content.into(),
        );
        self.connection.request(&request).await.map(|_| ())
    }
}

/// A v1 client's terminals (`terminal/create` and the methods on what it returns).
#[derive(Debug, Clone)]
pub struct ClientTerminals {
    pub(crate) connection: Connection,
    pub(crate) session_id: String,
}

/// How a client terminal's command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TerminalExit {
    /// Its exit code, when it exited.
    pub code: Option<u32>,
    /// The signal that stopped it, when one did.
    pub signal: Option<String>,
}

/// A client terminal's output so far.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TerminalOutput {
    /// The text kept.
    pub text: String,
    /// `true` when the start was cut to stay within the output limit.
    pub truncated: bool,
    /// How it ended, once it has.
    pub exit: Option<TerminalExit>,
}

impl ClientTerminals {
    /// `terminal/create`: runs `command` with `args` on the client, in `cwd` (the session's
    /// when `None`), keeping at most `output_limit` bytes of output.
    pub async fn create(
        &self,
        command: &str,
        args: &[&str],
        cwd: Option<&Path>,
        output_limit: Option<u64>,
    ) -> Result<ClientTerminal, Error> {
        let mut request = acp_v1::CreateTerminalRequest::new(self.session_id.as_str(), command)
            .args(args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>());
        if let Some(cwd) = cwd {
            request = request.cwd(cwd.to_string_lossy().into_owned());
        }
        if let Some(limit) = output_limit {
            request = request.output_byte_limit(limit);
        }
        let response = self.connection.request(&request).await?;
        Ok(ClientTerminal {
            connection: self.connection.clone(),
            session_id: self.session_id.clone(),
            terminal_id: response.terminal_id.to_string(),
        })
    }
}

/// A terminal running on the client. Release it ([`ClientTerminal::release`]) when done.
#[derive(Debug, Clone)]
pub struct ClientTerminal {
    connection: Connection,
    session_id: String,
    terminal_id: String,
}

impl ClientTerminal {
    /// Its id, for `terminal` tool call content.
    pub fn id(&self) -> &str {
        &self.terminal_id
    }

    /// `terminal/output`.
    pub async fn output(&self) -> Result<TerminalOutput, Error> {
        let request =
            acp_v1::TerminalOutputRequest::new(self.session_id.as_str(), self.terminal_id.as_str());
        let response = self.connection.request(&request).await?;
        Ok(TerminalOutput {
            text: response.output,
            truncated: response.truncated,
            exit: response.exit_status.as_option().map(|status| TerminalExit {
                code: status.exit_code.as_option().copied(),
                signal: status.signal.as_option().cloned(),
            }),
        })
    }

    /// `terminal/wait_for_exit`.
    pub async fn wait_for_exit(&self) -> Result<TerminalExit, Error> {
        let request = acp_v1::WaitForTerminalExitRequest::new(
            self.session_id.as_str(),
            self.terminal_id.as_str(),
        );
        let response = self.connection.request(&request).await?;
        Ok(TerminalExit {
            code: response.exit_code.as_option().copied(),
            signal: response.signal.as_option().cloned(),
        })
    }

    /// `terminal/kill`: stops the command; the output stays readable.
    pub async fn kill(&self) -> Result<(), Error> {
        let request =
            acp_v1::KillTerminalRequest::new(self.session_id.as_str(), self.terminal_id.as_str());
        self.connection.request(&request).await.map(|_| ())
    }

    /// `terminal/release`: kills the command if it runs and lets the client forget it.
    pub async fn release(self) -> Result<(), Error> {
        let request = acp_v1::ReleaseTerminalRequest::new(
            self.session_id.as_str(),
            self.terminal_id.as_str(),
        );
        self.connection.request(&request).await.map(|_| ())
    }
}
