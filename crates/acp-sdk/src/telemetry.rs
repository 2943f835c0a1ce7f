//! OpenTelemetry export (the `otel` feature): the spans of this process (one per JSON-RPC
//! message, one `invoke_agent` per turn, one `execute_tool` per tool call) sent over OTLP, and
//! W3C trace context carried in `_meta` across every connection, so a client, the proxies of a
//! chain and an agent make one trace.
//!
//! Configured only by the standard variables, read by [`init`]: nothing is exported unless
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set;
//! `OTEL_EXPORTER_OTLP_PROTOCOL` (or `..._TRACES_PROTOCOL`) is `http/protobuf` (the default) or
//! `http/json`; `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME`
//! and `OTEL_RESOURCE_ATTRIBUTES` as the specification says; `OTEL_SDK_DISABLED=true` turns it
//! off. Payloads (prompt text, file contents, tool output) never go into spans.
//!
//! ```no_run
//! # fn main() {
//! let telemetry = acp_sdk::telemetry::init("my-agent");
//! // ... run ...
//! telemetry.shutdown(); // every span sent before the process exits
//! # }
//! ```

use std::collections::HashMap;

use acp_rpc::trace_context::{Propagation, TraceContext};
use opentelemetry::propagation::{TextMapCompositePropagator, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::Layer as _;

/// Why export could not start ([`init`] reports it and goes on without).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// A variable asks for what is not supported (`grpc`, say).
    #[error("{0}")]
    Unsupported(String),
    /// The exporter could not be built.
    #[error("cannot build the OTLP exporter: {0}")]
    Exporter(String),
    /// Another subscriber was installed first.
    #[error("a tracing subscriber is already installed")]
    AlreadyInstalled,
}

/// The running export; [`Telemetry::shutdown`] (or dropping it) sends what is left.
#[derive(Debug)]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// `true` when spans are being exported.
    pub fn is_exporting(&self) -> bool {
        self.provider.is_some()
    }

    /// Sends every span not sent yet and stops exporting.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(provider) = self.provider.take() {
            if let Err(err) = provider.shutdown() {
                eprintln!("telemetry: the last spans were not all sent: {err}");
            }
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The export [`start`] began, for [`finish`].
static STARTED: std::sync::Mutex<Option<Telemetry>> = std::sync::Mutex::new(None);

/// [`init`], kept for [`finish`]: for a program with many ways to exit.
pub fn start(service: &str) {
    let telemetry = init(service);
    *STARTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(telemetry);
}

/// Sends every span [`start`]'s export has not sent yet; call it before `std::process::exit`.
pub fn finish() {
    let started = STARTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some(telemetry) = started {
        telemetry.shutdown();
    }
}

/// Starts exporting when the environment asks for it (see the module); `service` is the
/// `service.name` unless `OTEL_SERVICE_NAME` says otherwise. A configuration that cannot work
/// is reported on stderr and the process goes on without export.
pub fn init(service: &str) -> Telemetry {
    match try_init(service) {
        Ok(telemetry) => telemetry,
        Err(err) => {
            eprintln!("telemetry: not exporting: {err}");
            Telemetry { provider: None }
        }
    }
}

/// [`init`], with the reason when export cannot start.
pub fn try_init(service: &str) -> Result<Telemetry, TelemetryError> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let endpoint =
        var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT"));
    if disabled || endpoint.is_none() {
        return Ok(Telemetry { provider: None });
    }
    let protocol =
        var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
    let protocol = match protocol.as_deref() {
        None | Some("http/protobuf") => Protocol::HttpBinary,
        Some("http/json") => Protocol::HttpJson,
        Some(other) => {
            return Err(TelemetryError::Unsupported(format!(
                "OTLP protocol `{other}`: use http/protobuf or http/json"
            )))
        }
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(http_client()?)
        .with_protocol(protocol)
        .build()
        .map_err(|err| TelemetryError::Exporter(err.to_string()))?;
    let mut resource = Resource::builder();
    if var("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name(service.to_owned());
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    let tracer = provider.tracer("acp");
    // Our crates' spans (the messages' are at debug), and what others record at info.
    let filter = tracing_subscriber::filter::Targets::new()
        .with_default(tracing::Level::INFO)
        .with_targets(
            [
                "acp_rpc",
                "acp_sdk",
                "acp_session",
                "acp_http",
                "acp",
                "acp_reference",
            ]
            .map(|target| (target, tracing::Level::DEBUG)),
        );
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(filter);
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
        .map_err(|_| TelemetryError::AlreadyInstalled)?;
    acp_rpc::trace_context::install(OtelPropagation::new());
    Ok(Telemetry {
        provider: Some(provider),
    })
}

/// The exporter's HTTP client: reqwest's blocking client (the batch processor sends from a
/// thread of its own) on rustls with the *ring* provider and the webpki roots. Built on a thread
/// of its own too: a blocking client cannot be built inside an async runtime.
fn http_client() -> Result<reqwest::blocking::Client, TelemetryError> {
    let build = || {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|err| err.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        reqwest::blocking::Client::builder()
            .use_preconfigured_tls(tls)
            .build()
            .map_err(|err| err.to_string())
    };
    std::thread::spawn(build)
        .join()
        .map_err(|_| TelemetryError::Exporter("building the HTTP client panicked".to_owned()))?
        .map_err(TelemetryError::Exporter)
}

/// W3C trace context and baggage, read from and written to spans through OpenTelemetry.
struct OtelPropagation {
    propagator: TextMapCompositePropagator,
}

impl OtelPropagation {
    fn new() -> Self {
        Self {
            propagator: TextMapCompositePropagator::new(vec![
                Box::new(TraceContextPropagator::new()),
                Box::new(BaggagePropagator::new()),
            ]),
        }
    }
}

impl Propagation for OtelPropagation {
    fn context_of(&self, span: &tracing::Span) -> Option<TraceContext> {
        let context = span.context();
        if !context.span().span_context().is_valid() {
            return None;
        }
        let mut fields = HashMap::new();
        self.propagator.inject_context(&context, &mut fields);
        let traceparent = fields.remove(acp_rpc::trace_context::TRACEPARENT)?;
        Some(
            TraceContext::new(traceparent)
                .with_tracestate(fields.remove(acp_rpc::trace_context::TRACESTATE))
                .with_baggage(fields.remove(acp_rpc::trace_context::BAGGAGE)),
        )
    }

    fn adopt(&self, span: &tracing::Span, context: &TraceContext) {
        let mut fields = HashMap::new();
        fields.insert(
            acp_rpc::trace_context::TRACEPARENT.to_owned(),
            context.traceparent.clone(),
        );
        if let Some(state) = &context.tracestate {
            fields.insert(acp_rpc::trace_context::TRACESTATE.to_owned(), state.clone());
        }
        if let Some(baggage) = &context.baggage {
            fields.insert(acp_rpc::trace_context::BAGGAGE.to_owned(), baggage.clone());
        }
        let parent = self.propagator.extract(&fields);
        let _ = span.set_parent(parent);
    }
}
