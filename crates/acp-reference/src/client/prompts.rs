//! The prompts the demo sends, and a one-line summary of the agent's capabilities.

use acp_v2::{
    AudioContent, ContentBlock, EmbeddedResource, EmbeddedResourceResource, ImageContent,
    InitializeResponse, TextContent, TextResourceContents,
};
use base64::Engine;

/// A 1×1 PNG.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// One prompt of the demo.
#[derive(Debug, Clone)]
pub struct Prompt {
    /// What the demo prints for it.
    pub label: String,
    /// Its content.
    pub blocks: Vec<ContentBlock>,
}

fn text(text: &str) -> Prompt {
    Prompt {
        label: text.to_owned(),
        blocks: vec![ContentBlock::from(TextContent::new(text))],
    }
}

/// The prompts that run to completion, in order: messages with attachments, then one per
/// scripted behaviour.
pub fn scripted() -> Vec<Prompt> {
    let greeting = "Hello, agent! Here are a picture, a sound and a file.";
    let source = TextResourceContents::new(
        "fn main() {\n    println!(\"hi\");\n}\n",
        "file:///demo/src/main.rs",
    )
    .mime_type("text/x-rust");
    let messages = Prompt {
        label: format!("{greeting} [+ image, audio, resource]"),
        blocks: vec![
            ContentBlock::from(TextContent::new(greeting)),
            ContentBlock::Image(Box::new(ImageContent::new(PIXEL_PNG, "image/png"))),
            ContentBlock::Audio(Box::new(AudioContent::new(
                base64::engine::general_purpose::STANDARD.encode(tiny_wav()),
                "audio/wav",
            ))),
            ContentBlock::Resource(Box::new(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(source),
            ))),
        ],
    };
    vec![
        messages,
        text("Use a tool to fix the greeting."),
        text("Run the tests in a terminal."),
        text("Make a plan and follow it."),
        text("Clean the build cache, with permission."),
    ]
}

/// The prompt the demo cancels.
pub fn slow() -> Prompt {
    text("Take it slow.")
}

/// A WAV file of eight silent 8 kHz mono 8-bit samples.
fn tiny_wav() -> Vec<u8> {
    let samples = [0x80_u8; 8];
    let data_len = u32::try_from(samples.len()).unwrap_or(0);
    let mut wav = Vec::with_capacity(44 + samples.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data_len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16_u32.to_le_bytes());
    wav.extend_from_slice(&1_u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1_u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000_u32.to_le_bytes()); // sample rate
    wav.extend_from_slice(&8000_u32.to_le_bytes()); // byte rate
    wav.extend_from_slice(&1_u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8_u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&data_len.to_le_bytes());
    wav.extend_from_slice(&samples);
    wav
}

/// The agent's capabilities in one line, e.g. `session (prompt: image, audio; mcp: stdio)`.
pub fn capabilities(agent: &InitializeResponse) -> String {
    let Some(session) = agent
        .capabilities
        .as_ref()
        .and_then(|c| c.session.as_option())
    else {
        return "no session support".to_owned();
    };
    let mut parts = Vec::new();
    if let Some(prompt) = session.prompt.as_option() {
        let kinds: Vec<&str> = [
            ("image", prompt.image.is_value()),
            ("audio", prompt.audio.is_value()),
            ("embeddedContext", prompt.embedded_context.is_value()),
        ]
        .into_iter()
        .filter_map(|(name, on)| on.then_some(name))
        .collect();
        parts.push(format!("prompt: {}", kinds.join(", ")));
    }
    if let Some(mcp) = session.mcp.as_option() {
        let kinds: Vec<&str> = [
            ("stdio", mcp.stdio.is_value()),
            ("http", mcp.http.is_value()),
        ]
        .into_iter()
        .filter_map(|(name, on)| on.then_some(name))
        .collect();
        parts.push(format!("mcp: {}", kinds.join(", ")));
    }
    if session.delete.is_value() {
        parts.push("delete".to_owned());
    }
    if session.additional_directories.is_value() {
        parts.push("additionalDirectories".to_owned());
    }
    format!("session ({})", parts.join("; "))
}
