//! The reference agent: [`crate::script`] behind [`acp_sdk::Agent`]. The SDK serves it to v1 and
//! v2 clients alike (sessions, list, resume and load with replay, close, delete, cancellation,
//! held prompts, validation, authentication); this module says only what the agent is and what a
//! turn does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use acp_sdk::agent::{
    AgentInfo, AuthMethodInfo, Capabilities, CommandInfo, ConfigCategory, ConfigOption,
    ConfigValue, Restored, SessionSetup, StopReason, Turn,
};
use acp_sdk::{Agent, ContentBlock, RpcError};
use acp_v2::EmbeddedResourceResource;

use crate::script::{self, Outcome, PromptPart, TurnInput, KEYWORDS, MODES};
use crate::validate::{self, Invalid};
use crate::AgentOptions;

/// The name the agent reports in `initialize`.
pub const AGENT_NAME: &str = "acp-reference-agent";

/// The id of the `mode` config option.
pub const MODE_CONFIG_ID: &str = "mode";

/// The id of the one advertised auth method (type `agent`: the agent handles it itself).
pub const LOGIN_METHOD_ID: &str = "agent-login";

/// The reference agent.
#[derive(Debug, Clone)]
pub struct ReferenceAgent {
    options: AgentOptions,
}

/// What the agent keeps per session.
#[derive(Debug)]
pub struct ReferenceSession {
    cwd: String,
    mode: Mutex<String>,
    prompts: AtomicU64,
    context_tokens: AtomicU64,
}

impl ReferenceSession {
    fn mode(&self) -> String {
        self.mode
            .lock()
            .map(|mode| mode.clone())
            .unwrap_or_default()
    }
}

impl ReferenceAgent {
    /// The agent with `options`.
    pub fn new(options: AgentOptions) -> Self {
        Self { options }
    }
}

impl Agent for ReferenceAgent {
    type Session = ReferenceSession;

    fn info(&self) -> AgentInfo {
        AgentInfo::new(AGENT_NAME, env!("CARGO_PKG_VERSION")).title("ACP reference agent")
    }

    fn capabilities(&self) -> Capabilities {
        let login = AuthMethodInfo::new(LOGIN_METHOD_ID, "Agent login").description(
            "The agent logs in by itself; optional unless the agent runs with --require-auth",
        );
        let capabilities = Capabilities::new()
            .rich_prompts()
            .mcp_http()
            .additional_directories()
            .auth_method(login);
        if self.options.require_auth {
            capabilities.auth_required()
        } else {
            capabilities
        }
    }

    async fn new_session(&self, setup: &SessionSetup) -> Result<ReferenceSession, RpcError> {
        Ok(ReferenceSession {
            cwd: setup.cwd.to_string_lossy().into_owned(),
            mode: Mutex::new(MODES[0].0.to_owned()),
            prompts: AtomicU64::new(0),
            context_tokens: AtomicU64::new(0),
        })
    }

    /// A restored session goes on counting its prompts (the first one titles the session).
    async fn restore_session(
        &self,
        setup: &SessionSetup,
        restored: &Restored,
    ) -> Result<ReferenceSession, RpcError> {
        let session = self.new_session(setup).await?;
        session.prompts.store(restored.prompts, Ordering::Relaxed);
        Ok(session)
    }

    fn check_prompt(
        &self,
        _session: &ReferenceSession,
        prompt: &[ContentBlock],
    ) -> Result<(), RpcError> {
        prompt_parts(prompt)
            .map(|_| ())
            .map_err(RpcError::invalid_params)
    }

    async fn prompt(
        &self,
        session: &ReferenceSession,
        turn: &mut Turn,
        prompt: Vec<ContentBlock>,
    ) -> Result<StopReason, RpcError> {
        let parts = prompt_parts(&prompt).map_err(RpcError::invalid_params)?;
        let input = TurnInput {
            parts,
            cwd: session.cwd.clone(),
            turn_number: session.prompts.fetch_add(1, Ordering::Relaxed) + 1,
            mode: session.mode(),
            context_tokens: session.context_tokens.load(Ordering::Relaxed),
        };
        let config = &self.options.script;
        let report = script::run(turn, &input, config)
            .await
            .map_err(|err| RpcError::internal_error(format!("the turn failed: {err}")))?;
        session
            .context_tokens
            .store(report.context_tokens, Ordering::Relaxed);
        Ok(match report.outcome {
            Outcome::EndTurn => StopReason::EndTurn,
            Outcome::Cancelled => StopReason::Cancelled,
        })
    }

    fn config_options(&self, session: &ReferenceSession) -> Vec<ConfigOption> {
        let values = MODES
            .iter()
            .map(|(value, name, description)| {
                ConfigValue::new(*value, *name).description(*description)
            })
            .collect();
        vec![
            ConfigOption::select(MODE_CONFIG_ID, "Session Mode", session.mode(), values)
                .description("How the agent works")
                .category(ConfigCategory::Mode),
        ]
    }

    fn set_config_option(
        &self,
        session: &ReferenceSession,
        _id: &str,
        value: &str,
    ) -> Result<(), RpcError> {
        // The SDK has checked that `value` is one of the mode's values.
        if let Ok(mut mode) = session.mode.lock() {
            *mode = value.to_owned();
        }
        Ok(())
    }

    fn commands(&self, _session: &ReferenceSession) -> Vec<CommandInfo> {
        KEYWORDS
            .iter()
            .map(|(name, description)| CommandInfo::new(*name, *description))
            .collect()
    }
}

/// The prompt as the script sees it; an empty prompt, an unknown block type or bad base64 is
/// invalid.
pub fn prompt_parts(prompt: &[ContentBlock]) -> Result<Vec<PromptPart>, Invalid> {
    if prompt.is_empty() {
        return Err(Invalid::EmptyPrompt);
    }
    prompt
        .iter()
        .enumerate()
        .map(|(index, block)| part(index, block))
        .collect()
}

fn part(index: usize, block: &ContentBlock) -> Result<PromptPart, Invalid> {
    let data = || format!("prompt[{index}].data");
    Ok(match block {
        ContentBlock::Text(text) => PromptPart::Text(text.text.clone()),
        ContentBlock::Image(image) => PromptPart::Image {
            mime_type: image.mime_type.to_string(),
            bytes: validate::base64_len(&data(), &image.data)?,
        },
        ContentBlock::Audio(audio) => PromptPart::Audio {
            mime_type: audio.mime_type.to_string(),
            bytes: validate::base64_len(&data(), &audio.data)?,
        },
        ContentBlock::ResourceLink(link) => PromptPart::Link {
            name: link.name.clone(),
            uri: link.uri.clone(),
        },
        ContentBlock::Resource(embedded) => match &embedded.resource {
            EmbeddedResourceResource::TextResourceContents(text) => PromptPart::Resource {
                uri: text.uri.clone(),
                mime_type: text.mime_type.as_option().map(ToString::to_string),
                lines: Some(text.text.lines().count()),
                bytes: text.text.len(),
            },
            EmbeddedResourceResource::BlobResourceContents(blob) => PromptPart::Resource {
                uri: blob.uri.clone(),
                mime_type: blob.mime_type.as_option().map(ToString::to_string),
                lines: None,
                bytes: validate::base64_len(&format!("prompt[{index}].resource.blob"), &blob.blob)?,
            },
        },
        ContentBlock::Other(raw) => {
            return Err(Invalid::UnsupportedBlock {
                index,
                kind: raw.tag().to_owned(),
            })
        }
        // A block type a newer schema adds: not supported by this agent.
        #[allow(unreachable_patterns)]
        _ => {
            return Err(Invalid::UnsupportedBlock {
                index,
                kind: "unknown".to_owned(),
            })
        }
    })
}
