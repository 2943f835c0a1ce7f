//! A pass-through ACP proxy written on the official `agent-client-protocol` SDK's proxy role
//! (`Proxy.protocol_router()` with a `Proxy.v1()` and a `Proxy.v2()` implementation), speaking the
//! schema dialect (`proxy/initialize`, `proxy/successor`) on stdio.
//!
//! It forwards everything unchanged except `session/prompt`, whose last text block gets
//! MARKER appended, so a test can see the proxy was in the path (an echoing agent repeats it).

use agent_client_protocol::{Agent, Client, ConnectTo, Proxy, Stdio, v1, v2};

const MARKER: &str = " [via official proxy]";

fn mark_v1(prompt: &mut [v1::schema::ContentBlock]) {
    if let Some(v1::schema::ContentBlock::Text(text)) = prompt
        .iter_mut()
        .rev()
        .find(|b| matches!(b, v1::schema::ContentBlock::Text(_)))
    {
        text.text.push_str(MARKER);
    }
}

fn mark_v2(prompt: &mut [v2::schema::ContentBlock]) {
    if let Some(v2::schema::ContentBlock::Text(text)) = prompt
        .iter_mut()
        .rev()
        .find(|b| matches!(b, v2::schema::ContentBlock::Text(_)))
    {
        text.text.push_str(MARKER);
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let v1_proxy = Proxy.v1().on_receive_request_from(
        Client,
        async |mut request: v1::schema::PromptRequest, responder, cx| {
            mark_v1(&mut request.prompt);
            cx.send_request_to(Agent, request).forward_response_to(responder)
        },
        agent_client_protocol::on_receive_request!(),
    );
    let v2_proxy = Proxy.v2().on_receive_request_from(
        Client,
        async |mut request: v2::schema::PromptRequest, responder, cx| {
            mark_v2(&mut request.prompt);
            cx.send_request_to(Agent, request).forward_response_to(responder)
        },
        agent_client_protocol::on_receive_request!(),
    );
    Proxy
        .protocol_router()
        .with_v1(v1_proxy)
        .with_v2(v2_proxy)
        .connect_to(Stdio::new())
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
}
