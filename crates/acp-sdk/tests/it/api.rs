//! What a user names from outside the crate: an agent called directly with a `SessionSetup` of
//! its own (as its unit tests would), the handler types `Server::router` returns, the client's
//! `IntoPrompt` and `SessionSummary`, and the turn's `TurnEvent`.

use crate::common;

use acp_rpc::negotiate::Router;
use acp_sdk::agent::{Server, SessionSetup, TurnEvent, V1Handler, V2Handler};
use acp_sdk::client::{IntoPrompt, SessionSummary};
use acp_sdk::{Agent, ContentBlock};
use common::Scripted;

fn blocks(prompt: impl IntoPrompt) -> Vec<ContentBlock> {
    prompt.into_prompt()
}

#[tokio::test]
async fn the_public_surface_is_nameable() {
    let setup = SessionSetup::new("sess_t", std::env::temp_dir()).protocol_version(1);
    assert_eq!(
        (setup.session_id.as_str(), setup.protocol_version),
        ("sess_t", 1)
    );
    let session = Scripted.new_session(&setup).await.expect("new_session");
    assert_eq!(*session.mode.lock().expect("lock"), "ask");

    let router: Router<V1Handler<Scripted>, V2Handler<Scripted>> = Server::new(Scripted).router();
    drop(router);

    assert_eq!(blocks("hi"), blocks(String::from("hi")));
    assert_eq!(
        blocks(vec![ContentBlock::from("a"), ContentBlock::from("b")]).len(),
        2
    );

    let listed: Vec<SessionSummary> = Vec::new();
    assert!(listed.is_empty());
    assert!(matches!(TurnEvent::Text("x".into()), TurnEvent::Text(text) if text == "x"));
}
