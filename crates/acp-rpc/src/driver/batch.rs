//! Incoming batches: each entry is dispatched as if it had arrived on its own line, in the
//! batch's order (so barriers and keyed chains order it as they order everything), and the
//! answers are collected, in entry order, into one reply line by a task of its own. The reader
//! never waits for a batch's handlers.

use tokio::sync::oneshot;

use super::reader::{send, Dispatch};
use super::Reply;
use crate::error::RpcError;
use crate::handler::Handler;
use crate::message::{error_response, Entry, Message};
use crate::options::BatchPolicy;

pub(super) async fn run<H: Handler>(dispatch: &mut Dispatch<'_, H>, entries: Vec<Entry>) {
    let connection = dispatch.connection;
    if connection.shared.options.batches == BatchPolicy::Reject {
        let error = RpcError::invalid_request("batches are not accepted");
        send(connection, error_response(None, error)).await;
        return;
    }
    if entries.is_empty() {
        let error = RpcError::invalid_request("empty batch");
        send(connection, error_response(None, error)).await;
        return;
    }
    let mut slots = Vec::new();
    for entry in entries {
        if matches!(entry, Ok(Message::Request(_)) | Err(_)) {
            let (slot, answer) = oneshot::channel();
            dispatch.entry(entry, Reply::Slot(slot)).await;
            slots.push(answer);
        } else {
            dispatch.entry(entry, Reply::Direct).await;
        }
    }
    if slots.is_empty() {
        return; // only notifications and responses: no reply at all
    }
    let connection = connection.clone();
    connection.shared.tasks.clone().spawn(async move {
        // Appended as they come, in entry order: one buffer, not one string per answer.
        let mut reply = String::from("[");
        for slot in slots {
            if let Ok(answer) = slot.await {
                if reply.len() > 1 {
                    reply.push(',');
                }
                reply.push_str(&answer);
            }
        }
        if reply.len() > 1 {
            reply.push(']');
            let _ = connection.send_line(reply).await;
        }
    });
}
