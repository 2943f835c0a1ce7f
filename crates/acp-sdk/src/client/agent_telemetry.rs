//! [`AgentTelemetry`]: where the agents a client spawns send their telemetry, per the [Agent
//! Telemetry Export RFD](https://agentclientprotocol.com/rfds/agent-telemetry-export): the
//! standard OpenTelemetry variables in the agent's environment, so an agent on any
//! OpenTelemetry SDK exports out of band (never over the ACP connection) to the receiver the
//! client chose.

/// OTLP settings passed to a spawned agent ([`ClientOptions::agent_telemetry`](super::ClientOptions::agent_telemetry)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentTelemetry {
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`: the receiver's base URL (`http://127.0.0.1:4318`).
    pub endpoint: String,
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, `http/json`, `grpc`), when set.
    pub protocol: Option<String>,
    /// `OTEL_EXPORTER_OTLP_HEADERS`, in order.
    pub headers: Vec<(String, String)>,
}

impl AgentTelemetry {
    /// Export to `endpoint`.
    pub fn new(endpoint: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            protocol: None,
            headers: Vec::new(),
        }
    }

    /// With this OTLP protocol.
    #[must_use]
    pub fn protocol(mut self, protocol: impl Into<String>) -> Self {
        self.protocol = Some(protocol.into());
        self
    }

    /// With this header on every export (a token, say).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The settings this process has (`OTEL_EXPORTER_OTLP_ENDPOINT`, `_PROTOCOL`), to pass on;
    /// `None` without an endpoint. Headers stay with this process: they are credentials.
    pub fn from_env() -> Option<Self> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let endpoint = var("OTEL_EXPORTER_OTLP_ENDPOINT")?;
        let mut settings = Self::new(endpoint);
        settings.protocol = var("OTEL_EXPORTER_OTLP_PROTOCOL");
        Some(settings)
    }

    /// The variables to set in the agent's environment.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        let mut variables = vec![("OTEL_EXPORTER_OTLP_ENDPOINT", self.endpoint.clone())];
        if let Some(protocol) = &self.protocol {
            variables.push(("OTEL_EXPORTER_OTLP_PROTOCOL", protocol.clone()));
        }
        if !self.headers.is_empty() {
            let headers: Vec<String> = self
                .headers
                .iter()
                .map(|(name, value)| format!("{}={}", encode(name), encode(value)))
                .collect();
            variables.push(("OTEL_EXPORTER_OTLP_HEADERS", headers.join(",")));
        }
        variables
    }
}

/// Percent-encodes what the headers variable's `k=v,k=v` form would misread.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(byte));
            }
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variables_follow_the_specification() {
        let settings = AgentTelemetry::new("http://127.0.0.1:4318")
            .protocol("http/json")
            .header("Authorization", "Bearer a,b=c");
        assert_eq!(
            settings.variables(),
            [
                (
                    "OTEL_EXPORTER_OTLP_ENDPOINT",
                    "http://127.0.0.1:4318".to_owned()
                ),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json".to_owned()),
                (
                    "OTEL_EXPORTER_OTLP_HEADERS",
                    "Authorization=Bearer%20a%2Cb%3Dc".to_owned()
                ),
            ]
        );
        assert_eq!(AgentTelemetry::new("x").variables().len(), 1);
    }
}
