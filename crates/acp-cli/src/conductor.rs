//! `acp conductor "PROXY ARGS"... "AGENT ARGS"`: runs a proxy chain as one agent on stdio,
//! with [`acp_sdk::conductor`]; `--trace` records every link.

use std::path::Path;
use std::sync::{Arc, Mutex};

use acp_rpc::process::{stop_all, STOP_GRACE};
use acp_sdk::conductor::{Conductor, ConductorOptions, Link, TracedLine};
use acp_sdk::proxy::Dialect;

use crate::classify::Side;
use crate::transcript::Recorder;
use crate::CliError;

/// Runs the chain until the editor leaves (0), a signal comes (128 + it) or a component exits
/// (an error naming it: exit 1).
pub async fn run(
    components: &[String],
    trace: Option<&Path>,
    dialect: Option<&str>,
) -> Result<i32, CliError> {
    let mut conductor = Conductor::new();
    for line in components {
        let words = shlex::split(line)
            .filter(|words| !words.is_empty())
            .ok_or_else(|| CliError::Usage(format!("cannot read the command line `{line}`")))?;
        let mut command = tokio::process::Command::new(&words[0]);
        command.args(&words[1..]);
        conductor = conductor.component(line.clone(), command);
    }
    let mut options = ConductorOptions::default();
    options.dialect = match dialect {
        Some("schema") => Some(Dialect::Schema),
        Some("extension") => Some(Dialect::Extension),
        _ => None,
    };
    if let Some(path) = trace {
        let recorder = Recorder::create(path)
            .map_err(|err| CliError::Io(format!("cannot create the trace: {err}")))?;
        options.trace = Some(tracer(recorder));
    }
    let signals = acp_rpc::process::termination()
        .map_err(|err| CliError::Io(format!("listening for signals: {err}")))?;
    tokio::select! {
        served = conductor.options(options).serve_stdio() => match served {
            Ok(()) => Ok(0),
            Err(err) => {
                note!("acp conductor: {err}");
                Ok(1)
            }
        },
        signal = signals => {
            // Every component, politely then firmly, before the chain is dropped.
            stop_all(STOP_GRACE).await;
            Ok(signal.exit_code())
        }
    }
}

/// Records each traced line: the link's number (0 the editor's, N the Nth component's) and who
/// wrote it, the conductor being the agent on the editor's link and the client on the others.
fn tracer(recorder: Recorder) -> acp_sdk::conductor::Trace {
    let recorder = Mutex::new(Some(recorder));
    Arc::new(move |traced: TracedLine<'_>| {
        let (link, from) = match traced.link {
            Link::Component(index) => (
                index + 1,
                if traced.from_conductor {
                    Side::Client
                } else {
                    Side::Agent
                },
            ),
            _ => (
                0,
                if traced.from_conductor {
                    Side::Agent
                } else {
                    Side::Client
                },
            ),
        };
        let mut recorder = recorder.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(writer) = recorder.as_mut() {
            if let Err(err) = writer.record_on(Some(link), from, traced.line) {
                note!("acp conductor: cannot trace: {err}; tracing stops");
                *recorder = None;
            }
        }
    })
}
