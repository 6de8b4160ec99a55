//! Standard input and output as an MCP transport, read and written on the runtime's own thread.
//!
//! Tokio's `stdin()` and `stdout()` hand every read and write to a blocking thread (a terminal
//! or a file cannot be polled), which costs two thread wake-ups per message each way. The
//! desktop clients that start `purko gateway --stdio` give it pipes (Python's and Rust's
//! `subprocess`) or socket pairs (Node's `child_process`): both can be polled, so they are
//! driven by the runtime directly. Anything else falls back to tokio's blocking handles.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

type Reader = Pin<Box<dyn AsyncRead + Send>>;
type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// The reading and writing halves of this process's standard input and output.
pub fn transport() -> (Reader, Writer) {
    let input = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .and_then(reader);
    let output = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .and_then(writer);
    (
        input.unwrap_or_else(|| Box::pin(tokio::io::stdin())),
        output.unwrap_or_else(|| Box::pin(tokio::io::stdout())),
    )
}

fn reader(fd: OwnedFd) -> Option<Reader> {
    let file = File::from(fd);
    let kind = file.metadata().ok()?.file_type();
    if kind.is_fifo() {
        let pipe = tokio::net::unix::pipe::Receiver::from_file(file).ok()?;
        return Some(Box::pin(pipe));
    }
    if kind.is_socket() {
        return Some(Box::pin(socket(file)?));
    }
    None
}

fn writer(fd: OwnedFd) -> Option<Writer> {
    let file = File::from(fd);
    let kind = file.metadata().ok()?.file_type();
    if kind.is_fifo() {
        let pipe = tokio::net::unix::pipe::Sender::from_file(file).ok()?;
        return Some(Box::pin(pipe));
    }
    if kind.is_socket() {
        return Some(Box::pin(socket(file)?));
    }
    None
}

fn socket(file: File) -> Option<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
    stream.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(stream).ok()
}
