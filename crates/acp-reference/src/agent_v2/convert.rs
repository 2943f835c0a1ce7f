//! Protocol v2 shapes of the agent's fixed surface (capabilities, config options, commands)
//! and of its inputs (prompt blocks, session environment) as the script and validator see them.

use acp_v2::{
    AbsolutePath, AgentCapabilities, AuthMethod, AuthMethodAgent, AvailableCommand, Command,
    ContentBlock, EmbeddedResourceResource, Implementation, InitializeResponse, McpCapabilities,
    McpHttpCapabilities, McpServer, McpStdioCapabilities, PromptAudioCapabilities,
    PromptCapabilities, PromptEmbeddedContextCapabilities, PromptImageCapabilities,
    SessionAdditionalDirectoriesCapabilities, SessionCapabilities, SessionConfigOption,
    SessionConfigOptionCategory, SessionConfigOptionType, SessionConfigSelect,
    SessionConfigSelectOption, SessionConfigSelectOptions, SessionDeleteCapabilities,
};

use crate::auth::LOGIN_METHOD_ID;
use crate::script::{PromptPart, KEYWORDS, MODES};
use crate::validate::{self, Invalid};

/// The name the agent reports in `initialize`.
pub const AGENT_NAME: &str = "acp-reference-agent";

/// The id of the `mode` config option.
pub const MODE_CONFIG_ID: &str = "mode";

/// The `initialize` answer: what the agent is and everything it supports.
pub fn initialize_response() -> InitializeResponse {
    let prompt = PromptCapabilities::new()
        .image(PromptImageCapabilities::new())
        .audio(PromptAudioCapabilities::new())
        .embedded_context(PromptEmbeddedContextCapabilities::new());
    let mcp = McpCapabilities::new()
        .stdio(McpStdioCapabilities::new())
        .http(McpHttpCapabilities::new());
    let session = SessionCapabilities::new()
        .prompt(prompt)
        .mcp(mcp)
        .delete(SessionDeleteCapabilities::new())
        .additional_directories(SessionAdditionalDirectoriesCapabilities::new());
    let login = AuthMethodAgent::new(LOGIN_METHOD_ID, "Agent login").description(
        "The agent logs in by itself; optional unless the agent runs with --require-auth",
    );
    InitializeResponse::new(
        2,
        Implementation::new(AGENT_NAME, env!("CARGO_PKG_VERSION")).title("ACP reference agent"),
    )
    .capabilities(AgentCapabilities::new().session(session))
    .auth_methods(vec![AuthMethod::Agent(Box::new(login))])
}

/// The session's config options with `mode` at `current`.
pub fn config_options(current: &str) -> Vec<SessionConfigOption> {
    let values = MODES
        .iter()
        .map(|(value, name, description)| {
            SessionConfigSelectOption::new(*value, *name).description(*description)
        })
        .collect::<Vec<_>>();
    let select = SessionConfigSelect::new(current, SessionConfigSelectOptions::Ungrouped(values));
    vec![SessionConfigOption::new(
        MODE_CONFIG_ID,
        "Session Mode",
        SessionConfigOptionType::Select(select),
    )
    .description("How the agent works")
    .category(SessionConfigOptionCategory::Mode)]
}

/// The slash commands: one per script keyword (a prompt `/tool` contains the keyword `tool`).
pub fn commands() -> Vec<AvailableCommand> {
    KEYWORDS
        .iter()
        .map(|(name, description)| {
            AvailableCommand::Command(Box::new(Command::new(*name, *description)))
        })
        .collect()
}

/// Checks `cwd`, `additionalDirectories` and `mcpServers` of `session/new` or `session/resume`
/// (stdio and http MCP servers).
pub fn check_environment(
    cwd: &AbsolutePath,
    additional_directories: Option<&[AbsolutePath]>,
    mcp_servers: Option<&[McpServer]>,
) -> Result<(), Invalid> {
    validate::environment_v2(
        cwd.as_str(),
        additional_directories.unwrap_or_default(),
        mcp_servers.unwrap_or_default(),
        true,
    )
    .map(|_| ())
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
    Ok(match block {
        ContentBlock::Text(text) => PromptPart::Text(text.text.clone()),
        ContentBlock::Image(image) => PromptPart::Image {
            mime_type: image.mime_type.to_string(),
            bytes: decoded_len(&format!("prompt[{index}].data"), &image.data)?,
        },
        ContentBlock::Audio(audio) => PromptPart::Audio {
            mime_type: audio.mime_type.to_string(),
            bytes: decoded_len(&format!("prompt[{index}].data"), &audio.data)?,
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
                bytes: decoded_len(&format!("prompt[{index}].resource.blob"), &blob.blob)?,
            },
        },
        ContentBlock::Other(raw) => {
            return Err(Invalid::UnsupportedBlock {
                index,
                kind: raw.tag().to_owned(),
            })
        }
        // A block type a newer schema adds: not supported by this agent.
        _ => {
            return Err(Invalid::UnsupportedBlock {
                index,
                kind: "unknown".to_owned(),
            })
        }
    })
}

fn decoded_len(field: &str, data: &str) -> Result<usize, Invalid> {
    validate::base64_len(field, data)
}
