//! Protocol v1 shapes of the agent's fixed surface (capabilities, modes) and of its inputs
//! (prompt blocks, session environment) as the script and validator see them.

use acp_v1::{
    AgentAuthCapabilities, AgentCapabilities, AuthMethod, AuthMethodAgent, ContentBlock,
    EmbeddedResourceResource, Implementation, InitializeResponse, LogoutCapabilities,
    McpCapabilities, McpServer, PromptCapabilities, SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities, SessionMode, SessionModeState,
};

use crate::agent_v2::AGENT_NAME;
use crate::auth::LOGIN_METHOD_ID;
use crate::script::{PromptPart, MODES};
use crate::validate::{self, Invalid};

/// The v1 `initialize` answer: prompts with images, audio and embedded context; http MCP
/// servers (stdio ones are always supported in v1); additional directories; `logout`; one
/// agent-handled auth method. `loadSession` is false: this agent does not implement
/// `session/load`.
pub fn initialize_response() -> InitializeResponse {
    let prompt = PromptCapabilities::new()
        .image(true)
        .audio(true)
        .embedded_context(true);
    let capabilities = AgentCapabilities::new()
        .load_session(false)
        .prompt_capabilities(prompt)
        .mcp_capabilities(McpCapabilities::new().http(true))
        .session_capabilities(
            SessionCapabilities::new()
                .additional_directories(SessionAdditionalDirectoriesCapabilities::new()),
        )
        .auth(AgentAuthCapabilities::new().logout(LogoutCapabilities::new()));
    let login = AuthMethodAgent::new(LOGIN_METHOD_ID, "Agent login").description(
        "The agent logs in by itself; optional unless the agent runs with --require-auth",
    );
    InitializeResponse::new(1)
        .agent_capabilities(capabilities)
        .auth_methods(vec![AuthMethod::Agent(login)])
        .agent_info(
            Implementation::new(AGENT_NAME, env!("CARGO_PKG_VERSION")).title("ACP reference agent"),
        )
}

/// The session modes (`ask`, `code`) with `current` selected.
pub fn modes(current: &str) -> SessionModeState {
    let available = MODES
        .iter()
        .map(|(id, name, description)| SessionMode::new(*id, *name).description(*description))
        .collect::<Vec<_>>();
    SessionModeState::new(current, available)
}

/// Checks `cwd`, `additionalDirectories` and `mcpServers` of `session/new` (the same rules as
/// v2; SSE servers are not supported).
pub fn check_environment(
    cwd: &str,
    additional_directories: Option<&[String]>,
    mcp_servers: &[McpServer],
) -> Result<(), Invalid> {
    validate::environment_v1(
        cwd,
        additional_directories.unwrap_or_default(),
        mcp_servers,
        true,
    )
    .map(|_| ())
}

/// The prompt as the script sees it; an empty prompt or bad base64 is invalid.
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
    let data = format!("prompt[{index}].data");
    Ok(match block {
        ContentBlock::Text(text) => PromptPart::Text(text.text.clone()),
        ContentBlock::Image(image) => PromptPart::Image {
            mime_type: image.mime_type.clone(),
            bytes: validate::base64_len(&data, &image.data)?,
        },
        ContentBlock::Audio(audio) => PromptPart::Audio {
            mime_type: audio.mime_type.clone(),
            bytes: validate::base64_len(&data, &audio.data)?,
        },
        ContentBlock::ResourceLink(link) => PromptPart::Link {
            name: link.name.clone(),
            uri: link.uri.clone(),
        },
        ContentBlock::Resource(embedded) => match &embedded.resource {
            EmbeddedResourceResource::TextResourceContents(text) => PromptPart::Resource {
                uri: text.uri.clone(),
                mime_type: text.mime_type.as_option().cloned(),
                lines: Some(text.text.lines().count()),
                bytes: text.text.len(),
            },
            EmbeddedResourceResource::BlobResourceContents(blob) => PromptPart::Resource {
                uri: blob.uri.clone(),
                mime_type: blob.mime_type.as_option().cloned(),
                lines: None,
                bytes: validate::base64_len(&format!("prompt[{index}].resource.blob"), &blob.blob)?,
            },
        },
    })
}
