//! The reference agent's behaviour, written once for every protocol version.
//!
//! A turn is scripted by its prompt's text, by case-insensitive keywords that combine:
//!
//! | keyword | what the turn does |
//! | --- | --- |
//! | `tool` | a tool call that edits a file: content chunks, then a diff |
//! | `terminal` | a tool call showing an agent-owned terminal: command, absolute cwd, coloured output, exit status |
//! | `plan` | a plan whose steps (the other behaviours) are replaced as each completes |
//! | `permission` | a tool call that needs permission; acts on the answer (only an allow option is approval) |
//! | `slow` | a long-running message (30 s of periodic chunks by default) that stops promptly on cancellation |
//!
//! Without a keyword the turn echoes the prompt, describing images, audio and resources. Every
//! turn opens with a short thought, reports session info (the title on the first prompt) and
//! ends with a usage report. It reports through the SDK's neutral turn ([`TurnEvents`], which
//! `acp_sdk::agent::Turn` carries over v1 and v2), and the agent ends the turn with the
//! [`Outcome`] the script returns.

mod content;
mod plan;
mod steps;

use std::time::Duration;

use acp_rpc::Error;
use acp_session::neutral::{MessageRef, Speaker, StepStatus, TurnEvent, TurnEvents};
use plan::Plan;

pub use content::{estimate_tokens, git_quote, title_from, GREETING_FILE, TEST_COMMAND};

/// The session modes (the `mode` config option): value, name, description.
pub const MODES: &[(&str, &str, &str)] = &[
    (
        "ask",
        "Ask",
        "Answer questions; ask before changing anything",
    ),
    ("code", "Code", "Edit files and run commands"),
];

/// The keywords that script a turn, with what each does (advertised as commands too).
pub const KEYWORDS: &[(&str, &str)] = &[
    (
        "tool",
        "Edit a file in a tool call: content chunks and a diff",
    ),
    ("terminal", "Run tests in an agent-owned terminal"),
    ("plan", "Make a plan and follow it"),
    (
        "permission",
        "Ask permission before deleting the build cache",
    ),
    ("slow", "A long-running turn; cancel it with session/cancel"),
];

/// The context window reported in usage updates.
pub const CONTEXT_WINDOW: u64 = 200_000;

/// Timing of scripted turns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptConfig {
    /// The pause between steps (tool progress, terminal chunks, plan steps).
    pub step_delay: Duration,
    /// How long the `slow` behaviour runs unless cancelled.
    pub slow_duration: Duration,
    /// The interval of the `slow` behaviour's chunks.
    pub slow_tick: Duration,
    /// Every prompt also gets the tool call, terminal, plan and permission behaviours (for
    /// conformance kits that always prompt the same text).
    pub every_prompt: bool,
}

impl Default for ScriptConfig {
    fn default() -> Self {
        Self {
            step_delay: Duration::from_millis(40),
            slow_duration: Duration::from_secs(30),
            slow_tick: Duration::from_millis(250),
            every_prompt: false,
        }
    }
}

/// One content block of a prompt, as the script sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptPart {
    /// Text.
    Text(String),
    /// An image.
    Image {
        /// Its MIME type.
        mime_type: String,
        /// Its size once decoded.
        bytes: usize,
    },
    /// An audio clip.
    Audio {
        /// Its MIME type.
        mime_type: String,
        /// Its size once decoded.
        bytes: usize,
    },
    /// An embedded resource.
    Resource {
        /// Its URI.
        uri: String,
        /// Its MIME type, when given.
        mime_type: Option<String>,
        /// Lines of text, for a text resource.
        lines: Option<usize>,
        /// Its size in bytes (text or decoded blob).
        bytes: usize,
    },
    /// A link to a resource.
    Link {
        /// Its name.
        name: String,
        /// Its URI.
        uri: String,
    },
}

impl PromptPart {
    /// A short description of a non-text part; `None` for text.
    pub fn describe(&self) -> Option<String> {
        match self {
            PromptPart::Text(_) => None,
            PromptPart::Image { mime_type, bytes } => Some(format!(
                "an image ({}, {bytes} bytes)",
                content::visible(mime_type)
            )),
            PromptPart::Audio { mime_type, bytes } => Some(format!(
                "an audio clip ({}, {bytes} bytes)",
                content::visible(mime_type)
            )),
            PromptPart::Resource {
                uri,
                mime_type,
                lines,
                bytes,
            } => {
                let mime = mime_type.as_deref().unwrap_or("no MIME type");
                let size = match lines {
                    Some(lines) => format!("{lines} lines"),
                    None => format!("{bytes} bytes"),
                };
                Some(format!(
                    "an embedded resource {} ({}, {size})",
                    content::visible(uri),
                    content::visible(mime)
                ))
            }
            PromptPart::Link { name, uri } => Some(format!(
                "a link to {} ({})",
                content::visible(name),
                content::visible(uri)
            )),
        }
    }
}

/// What a turn works from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnInput {
    /// The prompt.
    pub parts: Vec<PromptPart>,
    /// The session's absolute working directory.
    pub cwd: String,
    /// 1 for the session's first prompt, then 2, 3 ...; makes ids unique in the session.
    pub turn_number: u64,
    /// The current `mode` value.
    pub mode: String,
    /// Tokens in context before this turn.
    pub context_tokens: u64,
}

impl TurnInput {
    /// The prompt's text blocks, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|part| match part {
                PromptPart::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It finished.
    EndTurn,
    /// It was cancelled and stopped early.
    Cancelled,
}

/// What a finished turn reports to the plumbing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnReport {
    /// How it ended.
    pub outcome: Outcome,
    /// Tokens in context after it.
    pub context_tokens: u64,
}

/// One scripted behaviour of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `tool`: edit a file.
    Tool,
    /// `terminal`: run the tests in a terminal.
    Terminal,
    /// `permission`: delete the build cache if permitted.
    Permission,
    /// `slow`: a long task.
    Slow,
    /// A plan step with nothing else to do (a plan without other behaviours).
    Pause(&'static str),
}

impl Step {
    /// The step's plan entry.
    pub fn label(self) -> &'static str {
        match self {
            Step::Tool => "Edit src/greeting.rs",
            Step::Terminal => "Run the tests",
            Step::Permission => "Delete the build cache (with permission)",
            Step::Slow => "Work through a long task",
            Step::Pause(label) => label,
        }
    }
}

/// The keywords found in a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Keywords {
    /// `plan` was asked for.
    pub plan: bool,
    /// The other behaviours, in their fixed order: tool, terminal, permission, slow.
    pub steps: Vec<Step>,
}

impl Keywords {
    /// Finds the keywords in `text`, case-insensitively.
    pub fn parse(text: &str) -> Self {
        let text = text.to_lowercase();
        let steps = [
            ("tool", Step::Tool),
            ("terminal", Step::Terminal),
            ("permission", Step::Permission),
            ("slow", Step::Slow),
        ]
        .into_iter()
        .filter(|(keyword, _)| text.contains(keyword))
        .map(|(_, step)| step)
        .collect();
        Self {
            plan: text.contains("plan"),
            steps,
        }
    }

    /// These keywords and, in their fixed order, tool, terminal, plan and permission.
    pub fn with_every_behaviour(mut self) -> Self {
        let slow = self.steps.contains(&Step::Slow);
        self.plan = true;
        self.steps = vec![Step::Tool, Step::Terminal, Step::Permission];
        if slow {
            self.steps.push(Step::Slow);
        }
        self
    }

    /// `true` when no keyword was found: the turn echoes the prompt.
    pub fn is_echo(&self) -> bool {
        !self.plan && self.steps.is_empty()
    }

    /// The keywords' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.plan {
            names.push("plan");
        }
        for step in &self.steps {
            names.push(match step {
                Step::Tool => "tool",
                Step::Terminal => "terminal",
                Step::Permission => "permission",
                Step::Slow => "slow",
                Step::Pause(_) => continue,
            });
        }
        names
    }
}

/// Runs one scripted turn on `out`. The caller ends the turn with the returned outcome.
pub async fn run<O: TurnEvents>(
    out: &mut O,
    input: &TurnInput,
    config: &ScriptConfig,
) -> Result<TurnReport, Error> {
    let mut runner = Runner {
        out,
        input,
        config,
        next_message: 0,
        tokens: input.context_tokens,
    };
    let outcome = runner.run().await?;
    Ok(TurnReport {
        outcome,
        context_tokens: runner.tokens,
    })
}

struct Runner<'a, O> {
    out: &'a mut O,
    input: &'a TurnInput,
    config: &'a ScriptConfig,
    next_message: u32,
    tokens: u64,
}

impl<O: TurnEvents> Runner<'_, O> {
    async fn run(&mut self) -> Result<Outcome, Error> {
        let text = self.input.text();
        self.tokens += estimate_tokens(&text);
        let keywords = if self.config.every_prompt {
            Keywords::parse(&text).with_every_behaviour()
        } else {
            Keywords::parse(&text)
        };
        self.session_info(&text).await?;
        self.think(&keywords).await?;

        let mut steps = keywords.steps.clone();
        if keywords.plan && steps.is_empty() {
            steps = vec![Step::Pause("Read the prompt"), Step::Pause("Think it over")];
        }
        let mut plan = keywords.plan.then(|| Plan::new(self.input, &steps));
        let mut summary = Vec::new();
        for (index, step) in steps.iter().enumerate() {
            if self.out.cancellation().is_cancelled() {
                break;
            }
            self.plan_step(&mut plan, index, StepStatus::InProgress)
                .await?;
            if let Some(line) = self.step(*step).await? {
                summary.push(line);
            }
            let status = if self.out.cancellation().is_cancelled() {
                StepStatus::Cancelled
            } else {
                StepStatus::Completed
            };
            self.plan_step(&mut plan, index, status).await?;
        }

        if keywords.plan && !self.out.cancellation().is_cancelled() {
            let steps = steps.len() + 1;
            let id = format!("plan_{}", self.input.turn_number);
            summary.push(format!("followed {id} ({steps} steps)"));
        }
        let report = steps.len();
        if !self.out.cancellation().is_cancelled() {
            self.plan_step(&mut plan, report, StepStatus::InProgress)
                .await?;
        }
        if keywords.is_echo() {
            self.echo(&text).await?;
        } else {
            self.summarise(&summary).await?;
        }
        let outcome = if self.out.cancellation().is_cancelled() {
            if let Some(plan) = &mut plan {
                let event = plan.cancel_unfinished();
                self.out.emit(event).await?;
            }
            Outcome::Cancelled
        } else {
            self.plan_step(&mut plan, report, StepStatus::Completed)
                .await?;
            Outcome::EndTurn
        };
        self.out
            .emit(TurnEvent::Usage {
                used: self.tokens,
                size: CONTEXT_WINDOW,
            })
            .await?;
        Ok(outcome)
    }

    async fn step(&mut self, step: Step) -> Result<Option<String>, Error> {
        match step {
            Step::Tool => self.tool().await.map(Some),
            Step::Terminal => self.terminal().await.map(Some),
            Step::Permission => self.permission().await.map(Some),
            Step::Slow => self.slow().await.map(Some),
            Step::Pause(_) => {
                self.pause(self.config.step_delay).await;
                Ok(None)
            }
        }
    }

    async fn session_info(&mut self, text: &str) -> Result<(), Error> {
        let title = (self.input.turn_number == 1).then(|| {
            let described = self.input.parts.iter().find_map(PromptPart::describe);
            match described {
                Some(description) if text.trim().is_empty() => title_from(&description),
                _ => title_from(text),
            }
        });
        self.out
            .emit(TurnEvent::SessionInfo {
                title,
                updated_at: acp_sdk::time::now_rfc3339(),
            })
            .await
    }

    async fn think(&mut self, keywords: &Keywords) -> Result<(), Error> {
        let thought = self.new_message();
        self.say(
            thought,
            Speaker::Thought,
            format!("Mode: {}. ", self.input.mode),
        )
        .await?;
        let plan = if keywords.is_echo() {
            "No keywords in the prompt, so I will echo it.".to_owned()
        } else {
            format!("The prompt asks for: {}.", keywords.names().join(", "))
        };
        self.say(thought, Speaker::Thought, plan).await
    }

    async fn echo(&mut self, text: &str) -> Result<(), Error> {
        let message = self.new_message();
        self.say(message, Speaker::Agent, "You said: ").await?;
        if !text.is_empty() {
            self.say(message, Speaker::Agent, content::visible(text))
                .await?;
        }
        for description in self.attachments() {
            self.say(message, Speaker::Agent, format!("\n- {description}"))
                .await?;
        }
        Ok(())
    }

    async fn summarise(&mut self, lines: &[String]) -> Result<(), Error> {
        let message = self.new_message();
        let head = if self.out.cancellation().is_cancelled() {
            "Stopped: the turn was cancelled."
        } else {
            "Done."
        };
        self.say(message, Speaker::Agent, head).await?;
        for line in lines.iter().cloned().chain(self.attachments()) {
            self.say(message, Speaker::Agent, format!("\n- {line}"))
                .await?;
        }
        Ok(())
    }

    fn attachments(&self) -> Vec<String> {
        self.input
            .parts
            .iter()
            .filter_map(PromptPart::describe)
            .map(|d| format!("you attached {d}"))
            .collect()
    }

    async fn plan_step(
        &mut self,
        plan: &mut Option<Plan>,
        index: usize,
        status: StepStatus,
    ) -> Result<(), Error> {
        match plan {
            Some(plan) => {
                let event = plan.set(index, status);
                self.out.emit(event).await
            }
            None => Ok(()),
        }
    }

    fn new_message(&mut self) -> MessageRef {
        self.next_message += 1;
        MessageRef(self.next_message)
    }

    async fn say(
        &mut self,
        message: MessageRef,
        speaker: Speaker,
        text: impl Into<String>,
    ) -> Result<(), Error> {
        let text = text.into();
        self.tokens += estimate_tokens(&text);
        self.out
            .emit(TurnEvent::Chunk {
                message,
                speaker,
                text,
            })
            .await
    }

    /// Waits `duration`; `false` (at once) when the turn is cancelled meanwhile.
    async fn pause(&self, duration: Duration) -> bool {
        if self.out.cancellation().is_cancelled() {
            return false;
        }
        tokio::select! {
            biased;
            () = self.out.cancellation().cancelled() => false,
            () = tokio::time::sleep(duration) => true,
        }
    }
}

#[cfg(test)]
mod tests;
