//! `acp chat -- AGENT` without `--prompt`: an interactive terminal client for any agent, v1 or
//! v2. Agent text streams as it arrives, thoughts dimmed, tool calls as status lines (updated in
//! place on a terminal), plans as checklists, terminal output as sanitised text; permission
//! requests are answered by the user; Ctrl-C cancels the running turn and a second one quits;
//! `/help` lists the commands (auth, config options, the agent's own slash commands).
//!
//! Input: one thread owns the line editor (rustyline: editing and history) and serves every
//! line asked for, the next prompt's and a permission answer's alike, in the order asked, so
//! two readers never compete for the terminal. While a turn runs the terminal is not in raw
//! mode, and Ctrl-C arrives as SIGINT (`tokio::signal`).
//!
//! What orders what on the screen: one loop draws the conversation, the turn's events and the
//! agent's permission questions alike. A question's request task hands it over ([`Questions`])
//! and waits for the answer; the loop takes it only once every event already queued is drawn,
//! and the SDK queues a request's earlier updates before the request's handler runs, so a
//! question always comes after what the agent said before asking. A question that arrives
//! between turns is asked once the line being typed at the prompt is entered.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use acp_sdk::client::{
    ClientSession, Event, Folded, Grant, PermissionRequest, StopReason, ToolStatus,
};
use acp_sdk::{Client, ClientOptions, StepStatus};
use rustyline::error::ReadlineError;

use tokio::sync::{mpsc, oneshot};

use crate::chat::ChatOptions;
use crate::CliError;

/// Why no line came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NoLine {
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D, or input closed.
    Closed,
}

type LineRequest = (String, oneshot::Sender<Result<String, NoLine>>);

/// The input thread: lines read with the editor, one request at a time.
#[derive(Clone)]
struct Input {
    requests: mpsc::UnboundedSender<LineRequest>,
}

impl Input {
    fn start() -> Result<Self, CliError> {
        let mut editor = rustyline::DefaultEditor::new()
            .map_err(|err| CliError::Io(format!("the line editor: {err}")))?;
        let (requests, mut pending) = mpsc::unbounded_channel::<LineRequest>();
        std::thread::spawn(move || {
            while let Some((prompt, reply)) = pending.blocking_recv() {
                let line = match editor.readline(&prompt) {
                    Ok(line) => {
                        if !line.trim().is_empty() {
                            let _ = editor.add_history_entry(line.as_str());
                        }
                        Ok(line)
                    }
                    Err(ReadlineError::Interrupted) => Err(NoLine::Interrupted),
                    Err(_) => Err(NoLine::Closed),
                };
                let _ = reply.send(line);
            }
        });
        Ok(Self { requests })
    }

    async fn line(&self, prompt: &str) -> Result<String, NoLine> {
        let (reply, answer) = oneshot::channel();
        if self.requests.send((prompt.to_owned(), reply)).is_err() {
            return Err(NoLine::Closed);
        }
        answer.await.unwrap_or(Err(NoLine::Closed))
    }
}

/// How output is drawn: colour and in-place updates only on a terminal.
///
/// The screen never erases what it did not draw: a status line is redrawn in place only while
/// the cursor is still on it, and every line of ours (status, plan, problem) starts on a fresh
/// line, so it never glues onto the agent's text.
struct Screen {
    tty: bool,
    /// The tool call whose status line the cursor is on, if it is on one.
    tool_line: Option<String>,
    /// The cursor is at the start of a line.
    at_line_start: bool,
}

impl Screen {
    fn new() -> Self {
        Self {
            tty: std::io::stdout().is_terminal(),
            tool_line: None,
            at_line_start: true,
        }
    }

    fn print(&mut self, text: &str) {
        let mut out = std::io::stdout();
        let _ = write!(out, "{text}");
        let _ = out.flush();
        if let Some(last) = text.chars().last() {
            self.at_line_start = last == '\n';
        }
    }

    /// Moves to the start of a line unless the cursor is there.
    fn fresh_line(&mut self) {
        if !self.at_line_start {
            self.print("\n");
        }
    }

    fn line(&mut self, text: &str) {
        self.end_tool_line();
        self.fresh_line();
        self.print(&format!("{text}\n"));
    }

    fn dim(&self, text: &str) -> String {
        if self.tty {
            format!("\x1b[2m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn end_tool_line(&mut self) {
        if self.tool_line.take().is_some() {
            self.fresh_line();
        }
    }

    fn tool(&mut self, session: &ClientSession, id: &str, title: &str, status: &ToolStatus) {
        let status = match status {
            ToolStatus::Pending => "pending".to_owned(),
            ToolStatus::InProgress => "running".to_owned(),
            ToolStatus::Completed => "done".to_owned(),
            ToolStatus::Failed => match crate::chat::failure_reason(session, id) {
                Some(reason) => format!("failed: {reason}"),
                None => "failed".to_owned(),
            },
            other => format!("{other:?}"),
        };
        let text = format!("[tool] {title}: {status}");
        if self.tty && self.tool_line.as_deref() == Some(id) {
            self.print(&format!("\r\x1b[K{text}"));
        } else if self.tty {
            self.end_tool_line();
            self.fresh_line();
            self.print(&text);
            self.tool_line = Some(id.to_owned());
        } else {
            self.line(&text);
        }
    }

    fn event(&mut self, session: &ClientSession, event: Event) {
        match event {
            Event::Text(text) => {
                self.end_tool_line();
                self.print(&text);
            }
            Event::Thought(text) => {
                self.end_tool_line();
                let dimmed = self.dim(&text);
                self.print(&dimmed);
            }
            Event::ToolCall { id, title, status } => self.tool(session, &id, &title, &status),
            Event::TerminalOutput { text, .. } => {
                self.end_tool_line();
                self.print(&text);
            }
            Event::Plan(steps) => {
                self.line("[plan]");
                for (step, status) in steps {
                    let mark = match status {
                        StepStatus::Completed => "[x]",
                        StepStatus::InProgress => "[~]",
                        StepStatus::Cancelled => "[-]",
                        _ => "[ ]",
                    };
                    self.line(&format!("  {mark} {step}"));
                }
            }
            Event::Problem(problem) => self.line(&format!("[problem] {problem}")),
            Event::Lagged(n) => self.line(&format!("[{n} events not shown]")),
            _ => {}
        }
    }
}

/// A permission question on its way from its request's task to the loop that draws the
/// conversation, with where its answer goes (`None`: dismissed).
type Question = (PermissionRequest, oneshot::Sender<Option<String>>);

/// The agent's permission questions, asked one at a time by the loop that draws the
/// conversation.
///
/// The channel holds one question; the request tasks behind it wait their turn, and their
/// number is bounded by the connection's `max_pending_requests`.
struct Questions {
    input: Input,
    waiting: mpsc::Receiver<Question>,
}

impl Questions {
    /// The channel's two ends: the sender for the permission handler.
    fn new(input: Input) -> (mpsc::Sender<Question>, Self) {
        let (ask, waiting) = mpsc::channel(1);
        (ask, Self { input, waiting })
    }

    /// The next question handed over.
    async fn next(&mut self) -> Option<Question> {
        self.waiting.recv().await
    }

    /// Asks `question` and sends the answer; one whose request is gone (the agent cancelled
    /// it, or the session was cancelled) is not asked.
    async fn answer(&self, screen: &mut Screen, (request, reply): Question) {
        if reply.is_closed() {
            return;
        }
        let answer = ask(&self.input, screen, request).await;
        let _ = reply.send(answer);
    }

    /// Asks the questions already handed over (between turns).
    async fn answer_waiting(&mut self, screen: &mut Screen) {
        while let Ok(question) = self.waiting.try_recv() {
            self.answer(screen, question).await;
        }
    }
}

/// Asks the user to choose among the request's options.
async fn ask(input: &Input, screen: &mut Screen, request: PermissionRequest) -> Option<String> {
    screen.end_tool_line();
    screen.fresh_line();
    let mut text = format!("\n[permission] {}\n", request.title);
    for (index, choice) in request.options.iter().enumerate() {
        text.push_str(&format!(
            "  {}) {} ({})\n",
            index + 1,
            choice.name,
            choice.kind
        ));
    }
    text.push_str("  Enter dismisses.\n");
    screen.print(&text);
    let answer = input.line("choice> ").await;
    // The editor ended the line the answer was typed on.
    screen.at_line_start = true;
    let answer = answer.ok()?;
    let index: usize = answer.trim().parse().ok()?;
    request
        .options
        .get(index.checked_sub(1)?)
        .map(|choice| choice.id.clone())
}

const HELP: &str = "/help  this list
/quit  leave (also Ctrl-D, or Ctrl-C twice)
/auth METHOD  log in with one of the agent's methods
/set ID VALUE  set a configuration option (mode, model...)
/sessions  the agent's sessions (those it keeps for you)
/resume ID  continue one of them here, its history replayed
/state  the session as folded so far
Ctrl-C during a turn cancels it.
Any other line is a prompt; the agent's own slash commands (/name) go to it as prompts.";

/// How long `/help` waits for a just-opened session's commands: agents send them right after
/// the `session/new` answer, and the answer reaches the chat before they are folded in.
const COMMANDS_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

/// The agent's commands in `session`; for a `fresh` session, waited for up to
/// [`COMMANDS_GRACE`].
async fn commands_soon(session: &ClientSession, fresh: bool) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + COMMANDS_GRACE;
    loop {
        let known = agent_commands(session);
        if !known.is_empty() || !fresh || tokio::time::Instant::now() >= deadline {
            return known;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// The slash commands the agent offers in `session`, as `/name`.
fn agent_commands(session: &ClientSession) -> Vec<String> {
    match session.folded() {
        Folded::V1(state) => state
            .available_commands
            .iter()
            .flatten()
            .map(|c| format!("/{}", c.name))
            .collect(),
        Folded::V2(state) => state
            .available_commands
            .iter()
            .flatten()
            .filter_map(|c| match c {
                acp_v2::AvailableCommand::Command(command) => Some(format!("/{}", command.name)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The session, created on first use (after `/auth` when the agent asks for login).
async fn session(
    client: &Client,
    held: &mut Option<ClientSession>,
    options: &ChatOptions,
    screen: &mut Screen,
    interrupts: &mut Interrupts,
) -> Option<ClientSession> {
    if held.is_none() {
        let Some(created) = interrupts
            .or_interrupt(crate::chat::open_session(client, options))
            .await
        else {
            screen.line("[interrupted]");
            return None;
        };
        match created {
            Ok(session) => *held = Some(session),
            Err(err) => {
                screen.line(&format!("[error] session/new: {err}"));
                let methods = crate::auth::methods(client);
                if !methods.is_empty() {
                    screen.line("[login] /auth METHOD, one of:");
                    for line in methods {
                        screen.line(&line);
                    }
                }
            }
        }
    }
    held.clone()
}

/// Ctrl-C while the terminal is not in raw mode (a turn runs, a call waits): one listener for
/// the whole chat, so no press is lost between two polls.
struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Interrupts {
    fn new() -> Result<Self, CliError> {
        Ok(Self {
            #[cfg(unix)]
            signal: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
                .map_err(|err| CliError::Io(format!("listening for Ctrl-C: {err}")))?,
        })
    }

    /// The next Ctrl-C.
    async fn next(&mut self) {
        #[cfg(unix)]
        {
            self.signal.recv().await;
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }

    /// Forgets presses made at the prompt's line editor's edges, before a new wait.
    async fn forget(&mut self) {
        while tokio::time::timeout(std::time::Duration::ZERO, self.next())
            .await
            .is_ok()
        {}
    }

    /// Runs `call`, or gives `None` when Ctrl-C comes first.
    async fn or_interrupt<T>(&mut self, call: impl std::future::Future<Output = T>) -> Option<T> {
        self.forget().await;
        tokio::select! {
            value = call => Some(value),
            () = self.next() => None,
        }
    }
}

/// How a turn left the chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TurnEnd {
    /// Ended on its own.
    Ended,
    /// A Ctrl-C cancelled it: the next Ctrl-C quits, even once back at the prompt.
    CancelledByUser,
    /// A second Ctrl-C: leave.
    Quit,
}

/// Runs one turn, Ctrl-C cancelling it and a second one quitting, the agent's questions asked
/// in their place among its events.
async fn turn(
    session: &ClientSession,
    text: String,
    screen: &mut Screen,
    interrupts: &mut Interrupts,
    questions: &mut Questions,
) -> TurnEnd {
    interrupts.forget().await;
    let mut turn = match session.prompt(text).await {
        Ok(turn) => turn,
        Err(err) => {
            screen.line(&format!("[error] {err}"));
            return TurnEnd::Ended;
        }
    };
    let mut pressed = 0;
    loop {
        tokio::select! {
            // Events first: a question handed over is drawn after the events queued before it.
            biased;
            event = turn.next_event() => match event {
                Some(event) => screen.event(session, event),
                None => break,
            },
            Some(question) = questions.next() => {
                questions.answer(screen, question).await;
                // Ctrl-C at the question dismisses it; it does not cancel the turn.
                interrupts.forget().await;
            }
            () = interrupts.next() => {
                pressed += 1;
                if pressed > 1 {
                    screen.line("[quit]");
                    return TurnEnd::Quit;
                }
                screen.line("[cancelling: Ctrl-C again quits]");
                if let Err(err) = turn.cancel().await {
                    screen.line(&format!("[error] cancel: {err}"));
                }
            }
        }
    }
    screen.end_tool_line();
    match turn.outcome().await {
        Ok(outcome) => {
            let reason = match outcome.stop_reason {
                StopReason::EndTurn => "done".to_owned(),
                other => format!("{other:?}"),
            };
            let note = screen.dim(&format!("[{reason}]"));
            screen.line(&note);
        }
        Err(err) => screen.line(&format!("\n[error] {err}")),
    }
    if pressed > 0 {
        TurnEnd::CancelledByUser
    } else {
        TurnEnd::Ended
    }
}

/// A new log file for a spawned agent's stderr, in the temporary directory: created here
/// (never an existing file or link someone else put there), its path shown once.
fn new_agent_log() -> Result<PathBuf, CliError> {
    let dir = std::env::temp_dir();
    let mut last = None;
    for attempt in 0..16u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = dir.join(format!(
            "acp-chat-{}-{nanos:x}{attempt}.agent.log",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(_) => return Ok(path),
            Err(err) => last = Some(err),
        }
    }
    Err(CliError::Io(format!(
        "a log file for the agent's stderr in `{}`: {}",
        dir.display(),
        last.map_or_else(String::new, |err| err.to_string())
    )))
}

/// The interactive loop.
pub async fn run(options: &ChatOptions) -> Result<i32, CliError> {
    // The agent's stderr (stack traces, hook warnings) is not part of the conversation.
    let mut options = options.clone();
    let mut own_log = None;
    if options.agent_log.is_none() && options.url.is_none() {
        let log = new_agent_log()?;
        own_log = Some(log.clone());
        options.agent_log = Some(log);
    }
    let options = &options;
    let input = Input::start()?;
    let (asking, mut questions) = Questions::new(input.clone());
    let yes = options.yes;
    let client_options = ClientOptions::new()
        .info("acp", env!("CARGO_PKG_VERSION"))
        .protocol(options.protocol)
        .services(options.services.clone())
        .on_permission(move |request| {
            let asking = asking.clone();
            async move {
                if yes != Grant::Refuse {
                    return request.pick(yes).map(|c| c.id.clone());
                }
                let (reply, answer) = oneshot::channel();
                asking.send((request, reply)).await.ok()?;
                answer.await.ok().flatten()
            }
        });
    let connected = crate::chat::connect(options, client_options).await?;
    let quit = acp_rpc::process::termination_but_interrupt()
        .map_err(|err| CliError::Io(format!("listening for signals: {err}")))?;
    // SIGTERM or SIGHUP (the terminal closed) ends the chat as /quit does: the agent is stopped
    // (its stdin closed, then its group signalled); the exit status is 128 + the signal.
    let code = tokio::select! {
        result = chat(&connected.client, options, &input, &mut questions) => result?,
        signal = quit => signal.exit_code(),
    };
    connected.shutdown().await;
    // A log of ours the agent wrote nothing to is not left behind.
    if let Some(log) = own_log {
        if std::fs::metadata(&log).is_ok_and(|meta| meta.len() == 0) {
            let _ = std::fs::remove_file(&log);
        }
    }
    Ok(code)
}

/// The conversation, until /quit, Ctrl-D or a second Ctrl-C.
async fn chat(
    client: &Client,
    options: &ChatOptions,
    input: &Input,
    questions: &mut Questions,
) -> Result<i32, CliError> {
    let mut screen = Screen::new();
    let agent = client.agent();
    screen.line(&format!(
        "{} {} (protocol v{}); /help for commands",
        agent.title.as_deref().unwrap_or(&agent.name),
        agent.version,
        agent.protocol_version
    ));
    if let Some(log) = &options.agent_log {
        let note = screen.dim(&format!("(the agent's stderr: {})", log.display()));
        screen.line(&note);
    }
    let mut held: Option<ClientSession> = None;
    let mut interrupts = Interrupts::new()?;
    if let Some(method) = &options.auth {
        match interrupts
            .or_interrupt(crate::auth::login(client, method))
            .await
        {
            Some(Ok(())) => screen.line(&format!("[login] done: {method}")),
            Some(Err(err)) => screen.line(&format!("[error] {err}")),
            None => screen.line("[interrupted]"),
        }
    }
    let mut interrupted = false;
    loop {
        questions.answer_waiting(&mut screen).await;
        let line = match input.line("> ").await {
            Ok(line) => line,
            Err(NoLine::Interrupted) if !interrupted => {
                interrupted = true;
                screen.line("(Ctrl-C again, Ctrl-D or /quit leaves)");
                continue;
            }
            Err(_) => break,
        };
        interrupted = false;
        let line = line.trim().to_owned();
        let mut words = line.split_whitespace();
        match words.next() {
            None => {}
            Some("/quit") => break,
            Some("/help") => {
                screen.line(HELP);
                // The agent says its commands in the session (available_commands_update): one
                // is opened for them, and given a moment for what follows its answer.
                let fresh = held.is_none();
                if fresh {
                    let note = screen.dim("(opening a session to ask the agent for its commands)");
                    screen.line(&note);
                }
                let opened = session(client, &mut held, options, &mut screen, &mut interrupts);
                if let Some(session) = opened.await {
                    let known = commands_soon(&session, fresh).await;
                    if !known.is_empty() {
                        // Names may hold spaces (gemini's "memory show"): one list, commas.
                        screen.line(&format!("the agent's commands: {}", known.join(", ")));
                    }
                }
            }
            Some("/auth") => match words.next() {
                Some(method) => {
                    match interrupts
                        .or_interrupt(crate::auth::login(client, method))
                        .await
                    {
                        Some(Ok(())) => screen.line("[login] done"),
                        Some(Err(err)) => screen.line(&format!("[error] {err}")),
                        None => screen.line("[interrupted]"),
                    }
                }
                None => {
                    screen.line("/auth METHOD, one of:");
                    for line in crate::auth::methods(client) {
                        screen.line(&line);
                    }
                }
            },
            Some("/set") => match (words.next(), words.next()) {
                (Some(id), Some(value)) => {
                    let opened = session(client, &mut held, options, &mut screen, &mut interrupts);
                    if let Some(session) = opened.await {
                        let set = session.set_config_option(id, value);
                        match interrupts.or_interrupt(set).await {
                            Some(Ok(())) => screen.line(&format!("[set] {id} = {value}")),
                            Some(Err(err)) => screen.line(&format!("[error] {err}")),
                            None => screen.line("[interrupted]"),
                        }
                    }
                }
                _ => screen.line("/set ID VALUE"),
            },
            Some("/sessions") => match interrupts.or_interrupt(client.list_sessions(None)).await {
                Some(Ok(sessions)) if sessions.is_empty() => screen.line("[sessions] none"),
                Some(Ok(sessions)) => {
                    for line in crate::sessions::lines(&sessions) {
                        screen.line(&line);
                    }
                }
                Some(Err(err)) => screen.line(&format!("[error] {err}")),
                None => screen.line("[interrupted]"),
            },
            Some("/resume") => match words.next() {
                Some(id) => match interrupts
                    .or_interrupt(client.resume_session(id, &options.cwd))
                    .await
                {
                    Some(Ok(session)) => {
                        let state = session.state();
                        screen.line(&format!(
                            "[resumed] {id}: {} messages, {} tool calls",
                            state.messages.len(),
                            state.tool_calls.len()
                        ));
                        held = Some(session);
                    }
                    Some(Err(err)) => screen.line(&format!("[error] {err}")),
                    None => screen.line("[interrupted]"),
                },
                None => screen.line("/resume ID (see /sessions)"),
            },
            Some("/state") => {
                if let Some(session) = &held {
                    let state = session.state();
                    screen.line(&format!(
                        "{} messages, {} tool calls, {} plan steps, {} problems",
                        state.messages.len(),
                        state.tool_calls.len(),
                        state.plan.len(),
                        state.problems.len()
                    ));
                }
            }
            Some(_) => {
                let opened = session(client, &mut held, options, &mut screen, &mut interrupts);
                let Some(session) = opened.await else {
                    continue;
                };
                match turn(&session, line, &mut screen, &mut interrupts, questions).await {
                    TurnEnd::Quit => break,
                    // "Ctrl-C again quits" holds at the prompt too, until a line is typed.
                    TurnEnd::CancelledByUser => interrupted = true,
                    TurnEnd::Ended => {}
                }
            }
        }
    }
    Ok(0)
}
