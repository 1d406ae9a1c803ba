//! An in-process client for the server, over an in-memory pipe: what the protocol tests and
//! the latency benchmark drive. It frames JSON-RPC messages like an editor, answers the
//! server's own requests (progress tokens, refreshes) with `null`, and keeps every
//! notification it receives.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};

/// A client connected to a server running on the same runtime.
pub struct Client {
    reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    writer: tokio::io::WriteHalf<DuplexStream>,
    next_id: i64,
    /// Notifications received so far (method and params), oldest first.
    pub notifications: Vec<(String, Value)>,
    /// Requests the server sent (method and params), oldest first.
    pub server_requests: Vec<(String, Value)>,
}

/// How long a test waits for one message before failing.
const TIMEOUT: Duration = Duration::from_secs(30);

impl Client {
    /// Starts a server on the current runtime and connects a client to it.
    pub fn start() -> Client {
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (server_in, server_out) = tokio::io::split(server_side);
        tokio::spawn(crate::transport::serve(server_in, server_out));
        let (reader, writer) = tokio::io::split(client_side);
        Client {
            reader: BufReader::new(reader),
            writer,
            next_id: 1,
            notifications: Vec::new(),
            server_requests: Vec::new(),
        }
    }

    async fn write(&mut self, message: &Value) -> std::io::Result<()> {
        let body = message.to_string();
        self.writer
            .write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
            .await?;
        self.writer.flush().await
    }

    async fn read(&mut self) -> std::io::Result<Value> {
        let mut length = None;
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line).await? == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "server closed",
                ));
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length:") {
                length = v.trim().parse::<usize>().ok();
            }
        }
        let length = length.ok_or_else(|| std::io::Error::other("no Content-Length"))?;
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).await?;
        serde_json::from_slice(&body).map_err(std::io::Error::other)
    }

    /// Reads one message: answers a server request, records a notification, returns a
    /// response.
    async fn pump(&mut self) -> std::io::Result<Option<Value>> {
        let message = tokio::time::timeout(TIMEOUT, self.read())
            .await
            .map_err(|_| std::io::Error::other("timed out waiting for the server"))??;
        let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
        match (method, message.get("id")) {
            (Some(m), Some(id)) => {
                let id = id.clone();
                self.server_requests.push((m, message["params"].clone()));
                self.write(&json!({"jsonrpc": "2.0", "id": id, "result": null})).await?;
                Ok(None)
            }
            (Some(m), None) => {
                self.notifications.push((m, message["params"].clone()));
                Ok(None)
            }
            (None, _) => Ok(Some(message)),
        }
    }

    /// Sends a request and waits for its response (`result`, or `error` as `Err`).
    pub async fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> std::io::Result<Result<Value, Value>> {
        let id = self.send(method, params).await?;
        self.response(id).await
    }

    /// Sends a request without waiting; returns its id.
    pub async fn send(&mut self, method: &str, params: Value) -> std::io::Result<i64> {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        Ok(id)
    }

    /// Waits for the response to request `id`.
    pub async fn response(&mut self, id: i64) -> std::io::Result<Result<Value, Value>> {
        loop {
            if let Some(r) = self.pump().await?
                && r.get("id").and_then(Value::as_i64) == Some(id)
            {
                return Ok(match r.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(r.get("result").cloned().unwrap_or(Value::Null)),
                });
            }
        }
    }

    /// Sends `body` framed as it is (any bytes), as a broken client might.
    pub async fn send_raw(&mut self, body: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes()).await?;
        self.writer.write_all(body).await?;
        self.writer.flush().await
    }

    /// Sends bytes with no framing added (broken headers).
    pub async fn send_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes).await?;
        self.writer.flush().await
    }

    /// Waits for the next response, whatever its id.
    pub async fn next_response(&mut self) -> std::io::Result<Value> {
        loop {
            if let Some(r) = self.pump().await? {
                return Ok(r);
            }
        }
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) -> std::io::Result<()> {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await
    }

    /// Waits for the next notification of `method` whose params satisfy `accept`, and returns
    /// its params (notifications already received count).
    pub async fn wait_for(
        &mut self,
        method: &str,
        accept: impl Fn(&Value) -> bool,
    ) -> std::io::Result<Value> {
        loop {
            if let Some(i) = self.notifications.iter().position(|(m, p)| m == method && accept(p)) {
                return Ok(self.notifications.remove(i).1);
            }
            self.pump().await?;
        }
    }

    /// `initialize` (with `capabilities` and `options`) and `initialized`.
    pub async fn initialize(
        &mut self,
        capabilities: Value,
        options: Value,
    ) -> std::io::Result<Value> {
        let result = self
            .request(
                "initialize",
                json!({"processId": null, "rootUri": null, "capabilities": capabilities, "initializationOptions": options}),
            )
            .await?
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        self.notify("initialized", json!({})).await?;
        Ok(result)
    }

    /// Opens a document.
    pub async fn open(&mut self, uri: &str, text: &str) -> std::io::Result<()> {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "wave", "version": 1, "text": text}}),
        )
        .await
    }

    /// Replaces `[start, end)` (line, character pairs) of a document with `text`.
    pub async fn change(
        &mut self,
        uri: &str,
        version: i32,
        start: (u32, u32),
        end: (u32, u32),
        text: &str,
    ) -> std::io::Result<()> {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{
                    "range": {"start": {"line": start.0, "character": start.1}, "end": {"line": end.0, "character": end.1}},
                    "text": text
                }]
            }),
        )
        .await
    }

    /// Shuts the server down.
    pub async fn shutdown(&mut self) -> std::io::Result<()> {
        let _ = self.request("shutdown", Value::Null).await?;
        self.notify("exit", Value::Null).await
    }
}
