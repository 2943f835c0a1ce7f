//! `acp chat -- AGENT` as a person uses it, through a pseudo-terminal: type a prompt and see the
//! streamed reply, answer a permission request with its option number, cancel a long turn with
//! Ctrl-C, leave with `/quit`.

use std::process::Command;

use rexpect::session::spawn_command;

use crate::common;

use common::{reference_agent, ACP};

#[test]
fn a_person_chats_answers_a_permission_and_cancels_with_ctrl_c() {
    for protocol in ["1", "2"] {
        let mut command = Command::new(ACP);
        command
            .args(["chat", "--protocol", protocol, "--"])
            .arg(reference_agent())
            .arg("--step-delay-ms=1");
        let mut chat = spawn_command(command, Some(15_000)).expect("acp chat starts");
        chat.exp_string(&format!("(protocol v{protocol}); /help for commands"))
            .expect("the banner");
        chat.exp_string("> ").expect("the prompt");

        chat.send_line("hello there").expect("typed");
        chat.exp_string("You said: hello there")
            .expect("the streamed reply");
        chat.exp_string("[done]").expect("the turn's end");

        chat.send_line("permission").expect("typed");
        chat.exp_string("[permission] ").expect("asked");
        chat.exp_string("1) Allow once").expect("the options");
        chat.exp_string("choice> ").expect("the choice prompt");
        chat.send_line("1").expect("answered");
        chat.exp_string("deleted target/ (permission granted)")
            .expect("the agent went on with the permission");
        chat.exp_string("[done]").expect("the turn's end");

        chat.send_line("slow").expect("typed");
        // The slow turn streams for 30 s unless cancelled.
        chat.exp_string("The prompt asks for: slow")
            .expect("the slow turn runs");
        std::thread::sleep(std::time::Duration::from_millis(300));
        chat.send_control('c').expect("Ctrl-C");
        chat.exp_string("[cancelling: Ctrl-C again quits]")
            .expect("the cancel");
        chat.exp_string("[Cancelled]")
            .expect("the turn ended cancelled");
        chat.exp_string("> ").expect("the prompt again");

        chat.send_line("/quit").expect("typed");
        chat.exp_eof().expect("acp chat leaves");
    }
}
