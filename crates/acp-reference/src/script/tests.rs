//! The script against a recording [`TurnEvents`].

use std::sync::Mutex;
use std::time::Duration;

use acp_rpc::CancellationToken;
use acp_session::neutral::{
    Choice, ChoiceKind, Decision, PermissionAsk, ToolCallPatch, ToolStatus,
};
use acp_session::Permission;

use super::*;

struct Recorder {
    events: Mutex<Vec<TurnEvent>>,
    asks: Mutex<Vec<PermissionAsk>>,
    answer: Option<String>,
    cancellation: CancellationToken,
}

impl Recorder {
    fn new(answer: Option<&str>) -> Self {
        Self {
            events: Mutex::default(),
            asks: Mutex::default(),
            answer: answer.map(str::to_owned),
            cancellation: CancellationToken::new(),
        }
    }

    fn events(&self) -> Vec<TurnEvent> {
        self.events.lock().expect("lock").clone()
    }

    fn kinds(&self) -> Vec<&'static str> {
        self.events()
            .iter()
            .map(|event| match event {
                TurnEvent::Chunk {
                    speaker: Speaker::Thought,
                    ..
                } => "thought",
                TurnEvent::Chunk { .. } => "message",
                TurnEvent::Tool(_) => "tool_call",
                TurnEvent::ToolContent { .. } => "tool_content",
                TurnEvent::Terminal(_) => "terminal",
                TurnEvent::TerminalOutput { .. } => "terminal_output",
                TurnEvent::PlanSteps { .. } => "plan",
                TurnEvent::SessionInfo { .. } => "info",
                TurnEvent::Usage { .. } => "usage",
                _ => "other",
            })
            .collect()
    }

    fn text_of(&self, wanted: Speaker) -> String {
        self.events()
            .iter()
            .filter_map(|event| match event {
                TurnEvent::Chunk { speaker, text, .. } if *speaker == wanted => {
                    Some(text.as_str().to_owned())
                }
                _ => None,
            })
            .collect()
    }
}

impl TurnEvents for Recorder {
    async fn emit(&mut self, event: TurnEvent) -> Result<(), Error> {
        self.events.lock().expect("lock").push(event);
        Ok(())
    }

    async fn ask_permission(
        &mut self,
        _tool_call_id: &str,
        _title: &str,
    ) -> Result<Permission, Error> {
        Ok(Permission::Cancelled)
    }

    async fn ask(&mut self, ask: PermissionAsk) -> Result<Decision, Error> {
        self.asks.lock().expect("lock").push(ask.clone());
        match &self.answer {
            Some(option) => Ok(ask.decide(option)),
            None => {
                self.cancellation.cancel();
                Ok(Decision::Cancelled)
            }
        }
    }

    fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }
}

fn input(text: &str) -> TurnInput {
    TurnInput {
        parts: vec![PromptPart::Text(text.to_owned())],
        cwd: "/work/demo".to_owned(),
        turn_number: 1,
        mode: "ask".to_owned(),
        context_tokens: 0,
    }
}

fn fast() -> ScriptConfig {
    ScriptConfig {
        step_delay: Duration::ZERO,
        slow_duration: Duration::from_millis(50),
        slow_tick: Duration::from_millis(5),
        every_prompt: false,
    }
}

#[test]
fn every_behaviour_is_added_in_the_fixed_order_keeping_slow() {
    let all = Keywords::parse("hi").with_every_behaviour();
    assert!(all.plan);
    assert_eq!(all.steps, [Step::Tool, Step::Terminal, Step::Permission]);
    let slow = Keywords::parse("take it slow").with_every_behaviour();
    assert_eq!(
        slow.steps,
        [Step::Tool, Step::Terminal, Step::Permission, Step::Slow]
    );
}

#[test]
fn keywords_are_case_insensitive_and_combine_in_a_fixed_order() {
    let keywords = Keywords::parse("Run the TERMINAL, make a Plan, use a tool");
    assert!(keywords.plan);
    assert_eq!(keywords.steps, [Step::Tool, Step::Terminal]);
    assert_eq!(keywords.names(), ["plan", "tool", "terminal"]);
    assert!(Keywords::parse("hello").is_echo());
}

#[test]
fn only_an_offered_allow_option_is_approval() {
    let ask = PermissionAsk::new(
        "t",
        ToolCallPatch::new("c"),
        vec![
            Choice::new("yes", "Yes", ChoiceKind::AllowOnce),
            Choice::new("no", "No", ChoiceKind::RejectOnce),
        ],
    );
    assert_eq!(ask.decide("yes"), Decision::Allowed);
    assert_eq!(ask.decide("no"), Decision::Rejected);
    assert_eq!(ask.decide("something else"), Decision::Rejected);
}

#[tokio::test]
async fn a_prompt_without_keywords_is_echoed_after_a_thought() {
    let mut out = Recorder::new(None);
    let mut turn = input("Hello there");
    turn.parts.push(PromptPart::Image {
        mime_type: "image/png".into(),
        bytes: 67,
    });
    let report = run(&mut out, &turn, &fast()).await.expect("ran");
    assert_eq!(report.outcome, Outcome::EndTurn);
    assert!(report.context_tokens > 0);
    assert_eq!(
        out.kinds(),
        ["info", "thought", "thought", "message", "message", "message", "usage"]
    );
    assert_eq!(
        out.text_of(Speaker::Agent),
        "You said: Hello there\n- you attached an image (image/png, 67 bytes)"
    );
    assert!(matches!(
        &out.events()[0],
        TurnEvent::SessionInfo { title: Some(title), .. } if title == "Hello there"
    ));
}

#[tokio::test]
async fn an_echo_shows_control_and_bidi_characters_instead_of_obeying_them() {
    let mut out = Recorder::new(None);
    let mut turn = input("safe\u{1b}[2Jwiped \u{202e}txt.exe\u{7}\tend\nnext");
    turn.parts.push(PromptPart::Link {
        name: "a\u{2066}b".into(),
        uri: "file:///x\u{0}".into(),
    });
    run(&mut out, &turn, &fast()).await.expect("ran");
    assert_eq!(
        out.text_of(Speaker::Agent),
        "You said: safe\\u{1b}[2Jwiped \\u{202e}txt.exe\\u{7}\tend\nnext\n\
         - you attached a link to a\\u{2066}b (file:///x\\u{0})"
    );
}

#[tokio::test]
async fn a_plan_is_replaced_as_its_steps_complete() {
    let mut out = Recorder::new(Some("allow_once"));
    run(&mut out, &input("plan: tool, terminal"), &fast())
        .await
        .expect("ran");
    let plans: Vec<Vec<StepStatus>> = out
        .events()
        .iter()
        .filter_map(|event| match event {
            TurnEvent::PlanSteps { steps, .. } => Some(steps.iter().map(|s| s.status).collect()),
            _ => None,
        })
        .collect();
    use StepStatus::{Completed as C, InProgress as I, Pending as P};
    assert_eq!(
        plans,
        [
            vec![I, P, P],
            vec![C, P, P],
            vec![C, I, P],
            vec![C, C, P],
            vec![C, C, I],
            vec![C, C, C]
        ]
    );
    let output: Vec<u8> = out
        .events()
        .iter()
        .filter_map(|event| match event {
            TurnEvent::TerminalOutput { bytes, .. } => Some(bytes.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(String::from_utf8_lossy(&output).contains("3 passed"));
}

#[tokio::test]
async fn permission_outcomes_are_acted_on() {
    for (answer, status, outcome) in [
        (Some("allow_once"), ToolStatus::Completed, Outcome::EndTurn),
        (Some("reject_once"), ToolStatus::Cancelled, Outcome::EndTurn),
        (Some("_future"), ToolStatus::Cancelled, Outcome::EndTurn),
        (None, ToolStatus::Cancelled, Outcome::Cancelled),
    ] {
        let mut out = Recorder::new(answer);
        let report = run(&mut out, &input("permission"), &fast())
            .await
            .expect("ran");
        assert_eq!(report.outcome, outcome, "{answer:?}");
        let last_status = out.events().iter().rev().find_map(|event| match event {
            TurnEvent::Tool(call) => call.status,
            _ => None,
        });
        assert_eq!(last_status, Some(status), "{answer:?}");
        let asks = out.asks.lock().expect("lock").clone();
        assert_eq!(asks.len(), 1);
        let first_call = out.events().iter().find_map(|event| match event {
            TurnEvent::Tool(call) => Some(call.clone()),
            _ => None,
        });
        assert_eq!(first_call.as_ref(), Some(&asks[0].tool_call));
    }
}

#[tokio::test]
async fn a_slow_turn_stops_promptly_when_cancelled() {
    let mut out = Recorder::new(None);
    let config = ScriptConfig {
        slow_duration: Duration::from_secs(30),
        ..fast()
    };
    let cancel = out.cancellation.clone();
    let started = std::time::Instant::now();
    let slow = input("slow");
    let (report, ()) = tokio::join!(run(&mut out, &slow, &config), async {
        tokio::time::sleep(Duration::from_millis(60)).await;
        cancel.cancel();
    });
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(report.expect("ran").outcome, Outcome::Cancelled);
    let text = out.text_of(Speaker::Agent);
    assert!(text.starts_with("Working on a long task (30 s)."), "{text}");
    assert!(
        text.contains(" stopped.Stopped: the turn was cancelled."),
        "{text}"
    );
}
