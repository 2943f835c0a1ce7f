//! The reference proxies, built on [`acp_sdk::proxy`]: what a useful proxy takes.
//!
//! - [`PassThrough`]: forwards everything unchanged (the SDK's defaults).
//! - [`Context`]: puts a text (a file's contents) before every prompt, as its first content
//!   block, in v1 and v2 alike.
//! - [`Policy`]: answers the agent's permission requests by rules (`allow`/`reject` by a word
//!   of the tool call's kind or title, or of the request's title) without asking the editor; what no rule covers still goes to the
//!   editor.

use acp_sdk::proxy::{Proxy, ProxyContext, Request};
use acp_sdk::RpcError;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// Forwards every message unchanged.
pub struct PassThrough;

impl Proxy for PassThrough {}

/// Puts its text before every prompt.
pub struct Context {
    /// The text, sent as a `text` content block.
    pub text: String,
}

impl Proxy for Context {
    async fn client_request(
        &self,
        mut request: Request,
        cx: ProxyContext,
    ) -> Result<Box<RawValue>, RpcError> {
        if request.method == "session/prompt" {
            let mut params: Value = request.params_as()?;
            if let Some(prompt) = params.get_mut("prompt").and_then(Value::as_array_mut) {
                prompt.insert(0, json!({ "type": "text", "text": self.text }));
            }
            request.params = Some(acp_sdk::proxy::to_raw(&params)?);
        }
        cx.forward(request).await
    }
}

/// Answers permission requests by rules: the first rule whose word appears in the tool call's
/// kind or title decides.
pub struct Policy {
    /// `(word, allow)` pairs, in order.
    pub rules: Vec<(String, bool)>,
}

impl Policy {
    /// Reads rules, one per line: `allow WORD` or `reject WORD` (`#` starts a comment).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut rules = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            match line.split_once(char::is_whitespace) {
                None if line.is_empty() => {}
                Some(("allow", word)) => rules.push((word.trim().to_lowercase(), true)),
                Some(("reject", word)) => rules.push((word.trim().to_lowercase(), false)),
                _ => {
                    return Err(format!(
                        "line {}: expected `allow WORD` or `reject WORD`",
                        number + 1
                    ))
                }
            }
        }
        Ok(Self { rules })
    }
}

impl Proxy for Policy {
    async fn agent_request(
        &self,
        request: Request,
        cx: ProxyContext,
    ) -> Result<Box<RawValue>, RpcError> {
        if request.method == "session/request_permission" {
            let params: Value = request.params_as()?;
            // v1 describes the tool call (`toolCall`), v2 the prompt (`title`).
            let tool = &params["toolCall"];
            let about = [&tool["kind"], &tool["title"], &params["title"]]
                .iter()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            let decided = self
                .rules
                .iter()
                .find(|(word, _)| about.contains(word.as_str()));
            let kinds: &[&str] = match decided {
                Some((_, true)) => &["allow_once", "allow_always"],
                Some((_, false)) => &["reject_once", "reject_always"],
                None => &[],
            };
            let options = params["options"].as_array().into_iter().flatten();
            let chosen = options
                .filter(|o| kinds.contains(&o["kind"].as_str().unwrap_or("")))
                .find_map(|o| o["optionId"].as_str());
            if let Some(option) = chosen {
                let outcome = json!({ "outcome": { "outcome": "selected", "optionId": option } });
                return acp_sdk::proxy::to_raw(&outcome);
            }
        }
        cx.forward(request).await
    }
}
