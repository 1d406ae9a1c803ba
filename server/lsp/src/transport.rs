//! The framing layer in front of `tower-lsp-server`: reads the client's messages, answers the
//! malformed ones itself and passes on only what the library can decode.
//!
//! `tower-lsp-server` 0.23 answers a message it cannot decode (text that is not JSON, invalid
//! UTF-8, a batch, an id of `1.5`, a missing `jsonrpc`, a lone surrogate escape) with its
//! JSON-RPC error and then ends the stream, so the server exits. Here each message is checked
//! first; a bad one gets its error (`-32700` parse error, `-32600` invalid request) and the
//! session goes on, as JSON-RPC 2.0 asks. A lone UTF-16 surrogate escape (`"\ud83d"`, which a
//! JavaScript client sends for a buffer holding half a pair) is repaired to U+FFFD, as
//! rust-analyzer and the TypeScript server do. A request whose method starts with `$/` is
//! answered MethodNotFound (`-32601`): the protocol lets a server ignore `$/` notifications,
//! but a request needs an answer.
//!
//! The library talks to two in-memory pipes. What it writes is read back frame by frame and
//! goes to the real output through one writer, with this layer's own answers between frames.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The largest message body accepted from the client (a whole-document `didOpen` of a 1 MB
/// file fits many times over); a larger one is skipped and answered with a parse error. What
/// one message costs to decode grows with it (a body of empty arrays is about 20 bytes of
/// memory per byte), so the bound is also a bound on memory.
pub const MAX_MESSAGE: usize = 16 << 20;

/// How long the server may take to finish its work after `exit` or the end of its input: a
/// handler waiting for the client's answer to one of its own requests never finishes then.
const WIND_DOWN: std::time::Duration = std::time::Duration::from_secs(2);

/// The longest header line accepted.
const MAX_HEADER_LINE: usize = 8 << 10;

/// Serves the protocol on `input` and `output` until the client exits or `input` ends.
pub async fn serve<I, O>(input: I, output: O)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
{
    let (mut to_server, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, from_server) = tokio::io::duplex(1 << 20);
    let (service, socket) = crate::service();
    let server = tower_lsp_server::Server::new(server_in, server_out, socket).serve(service);
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();

    // Frames the library writes, passed on whole.
    let relay_tx = out_tx.clone();
    let relay = async move {
        let mut from_server = BufReader::new(from_server);
        while let Ok(Some(body)) = read_frame(&mut from_server, usize::MAX).await {
            if let Frame::Body(body) = body
                && relay_tx.send(body).is_err()
            {
                break;
            }
        }
    };

    // The one writer of the real output.
    let writer = async move {
        let mut output = output;
        while let Some(body) = out_rx.recv().await {
            let header = format!("Content-Length: {}\r\n\r\n", body.len());
            if output.write_all(header.as_bytes()).await.is_err()
                || output.write_all(&body).await.is_err()
                || output.flush().await.is_err()
            {
                break;
            }
        }
    };

    // The client's messages: checked, then passed on or answered here.
    let reader = async move {
        let mut input = BufReader::new(input);
        loop {
            let frame = match read_frame(&mut input, MAX_MESSAGE).await {
                Ok(Some(f)) => f,
                // The end of the input, or an error reading it: the session is over.
                Ok(None) | Err(_) => break,
            };
            let body = match frame {
                Frame::Body(b) => b,
                Frame::Bad(why) => {
                    let _ = out_tx.send(error_reply(Value::Null, -32700, &why));
                    continue;
                }
            };
            match check(&body) {
                Checked::Pass(text, exit) => {
                    let header = format!("Content-Length: {}\r\n\r\n", text.len());
                    if to_server.write_all(header.as_bytes()).await.is_err()
                        || to_server.write_all(text.as_bytes()).await.is_err()
                        || exit
                    {
                        break;
                    }
                }
                Checked::Answer(reply) => {
                    let _ = out_tx.send(reply);
                }
                Checked::Drop => {}
            }
        }
        // Closing the library's input ends `serve`.
        drop(to_server);
    };

    // The server ends on `exit` (or on the end of its input): then this stops reading too,
    // and the writer sends what is queued and ends when the last sender goes.
    let work = async move {
        let main = async move {
            tokio::join!(server, relay);
        };
        tokio::pin!(main);
        tokio::pin!(reader);
        tokio::select! {
            () = &mut main => {}
            () = &mut reader => {
                let _ = tokio::time::timeout(WIND_DOWN, main).await;
            }
        }
    };
    tokio::join!(work, writer);
}

/// One framed message, or why it could not be framed.
enum Frame {
    Body(Vec<u8>),
    /// A header without a usable `Content-Length`, or a body over [`MAX_MESSAGE`] (skipped).
    Bad(String),
}

/// Reads the next `Content-Length` framed message; `None` at the end of the input.
async fn read_frame<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    limit: usize,
) -> std::io::Result<Option<Frame>> {
    let mut length: Option<Result<usize, String>> = None;
    let mut any = false;
    loop {
        let mut line = Vec::new();
        let n = (&mut *input).take(MAX_HEADER_LINE as u64).read_until(b'\n', &mut line).await?;
        if n == 0 {
            return Ok(if any {
                Some(Frame::Bad("the input ended inside a header".into()))
            } else {
                None
            });
        }
        if !line.ends_with(b"\n") && n >= MAX_HEADER_LINE {
            // A header line too long to be one: skip to its end without keeping it.
            skip_line(input).await?;
            length = Some(Err(format!("a header line longer than {MAX_HEADER_LINE} bytes")));
            any = true;
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !any {
                // Blank lines between messages.
                continue;
            }
            break;
        }
        any = true;
        // After a message whose length was unknown, its body and the next header share a
        // line: the header starts where `Content-Length` does, as the library's codec finds it.
        let header =
            text.to_ascii_lowercase().find("content-length:").map_or(text, |at| &text[at..]);
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| format!("Content-Length `{}` is not a byte count", value.trim())),
            );
        }
    }
    let length = match length {
        None => return Ok(Some(Frame::Bad("a message header without Content-Length".into()))),
        Some(Err(why)) => return Ok(Some(Frame::Bad(why))),
        Some(Ok(n)) => n,
    };
    if length > limit {
        tokio::io::copy(&mut (&mut *input).take(length as u64), &mut tokio::io::sink()).await?;
        return Ok(Some(Frame::Bad(format!(
            "a message of {length} bytes, over the limit of {limit}"
        ))));
    }
    let mut body = vec![0; length];
    match input.read_exact(&mut body).await {
        Ok(_) => Ok(Some(Frame::Body(body))),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// Reads up to and including the next newline, keeping nothing.
async fn skip_line<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> std::io::Result<()> {
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(at) => {
                input.consume(at + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// What to do with a message.
#[derive(Debug, PartialEq)]
enum Checked {
    /// Pass this text to the library; `true` for the `exit` notification, after which
    /// nothing more is read.
    Pass(String, bool),
    /// Answer the client with this body.
    Answer(Vec<u8>),
    /// Neither: a malformed response to one of the server's requests (JSON-RPC answers
    /// nothing to a response).
    Drop,
}

/// Checks one message body against JSON-RPC 2.0 as the library decodes it.
fn check(body: &[u8]) -> Checked {
    let Ok(text) = std::str::from_utf8(body) else {
        return Checked::Answer(error_reply(Value::Null, -32700, "the message is not UTF-8"));
    };
    let text = repair_surrogates(text);
    let value: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            return Checked::Answer(error_reply(
                Value::Null,
                -32700,
                &format!("the message is not JSON: {e}"),
            ));
        }
    };
    let invalid = |id: Value, why: &str| Checked::Answer(error_reply(id, -32600, why));
    let Value::Object(message) = &value else {
        return match value {
            Value::Array(_) => invalid(Value::Null, "batches are not part of the protocol"),
            _ => invalid(Value::Null, "a message is a JSON object"),
        };
    };
    let has = |key: &str| message.contains_key(key);
    // What is passed on is the parsed value written again: one spelling of each key, and the
    // last of two equal keys, where the library's decoder rejects a repeated field.
    let pass = |exit: bool| match serde_json::to_string(&value) {
        Ok(text) => Checked::Pass(text, exit),
        Err(_) => Checked::Drop,
    };
    if !has("method") {
        // A response to one of the server's requests: its id is the server's, so nothing is
        // ever answered to it, and a malformed one is dropped.
        if has("result") || has("error") {
            return if response_ok(message) { pass(false) } else { Checked::Drop };
        }
        return invalid(
            Value::Null,
            "a message has a method (a request or a notification), or a result or an error (a response)",
        );
    }
    // The id of a request: an integer or a string.
    let id = match message.get("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id.clone()),
        Some(id @ Value::Number(n)) if n.is_i64() => Some(id.clone()),
        Some(_) => return invalid(Value::Null, "an id is an integer or a string"),
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(reply_id, "a message has \"jsonrpc\": \"2.0\"");
    }
    let Some(Value::String(method)) = message.get("method") else {
        return invalid(reply_id, "a method is a string");
    };
    if has("result") || has("error") {
        return invalid(reply_id, "a request or a notification has no result or error");
    }
    if let Some(p) = message.get("params")
        && !(p.is_object() || p.is_array() || p.is_null())
    {
        return invalid(reply_id, "params are an object or an array");
    }
    if method.starts_with("$/") && id.is_some() {
        return Checked::Answer(error_reply(
            reply_id,
            -32601,
            &format!("the server has no request `{method}`"),
        ));
    }
    pass(method == "exit" && id.is_none())
}

/// Whether a response decodes as the library's: `"jsonrpc": "2.0"`, an integer or string id,
/// and a result or an error object of an integer code, a string message and maybe data.
fn response_ok(message: &serde_json::Map<String, Value>) -> bool {
    let id_ok = match message.get("id") {
        Some(Value::String(_)) => true,
        Some(Value::Number(n)) => n.is_i64(),
        _ => false,
    };
    let error_ok = match message.get("error") {
        None => message.contains_key("result"),
        Some(Value::Object(e)) => {
            !message.contains_key("result")
                && e.get("code").is_some_and(|c| c.as_i64().is_some())
                && e.get("message").is_some_and(Value::is_string)
                && e.keys().all(|k| matches!(k.as_str(), "code" | "message" | "data"))
        }
        Some(_) => false,
    };
    id_ok && error_ok && message.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
}

/// A JSON-RPC error response.
fn error_reply(id: Value, code: i64, message: &str) -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
        .to_string()
        .into_bytes()
}

/// Replaces `\uXXXX` escapes of lone UTF-16 surrogates with `\uFFFD`; pairs stay.
fn repair_surrogates(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\u") {
        return text.into();
    }
    let bytes = text.as_bytes();
    let hex = |at: usize| -> Option<u16> {
        let digits = text.get(at..at + 4)?;
        if digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            u16::from_str_radix(digits, 16).ok()
        } else {
            None
        }
    };
    // `\uXXXX` escapes at byte offsets, with their code units.
    let escape = |at: usize| -> Option<u16> {
        (bytes.get(at) == Some(&b'\\') && bytes.get(at + 1) == Some(&b'u')).then(|| hex(at + 2))?
    };
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape(i) else {
            // Another escape (`\\`, `\"`, ...): its next character is not an escape start.
            i += 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => match escape(i + 6) {
                Some(0xDC00..=0xDFFF) => {
                    i += 12;
                    continue;
                }
                _ => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            out.push_str(&text[last..i]);
            out.push_str("\\uFFFD");
            last = i + 6;
        }
        i += 6;
    }
    if last == 0 {
        return text.into();
    }
    out.push_str(&text[last..]);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(body: &str) -> Value {
        match check(body.as_bytes()) {
            Checked::Answer(b) => serde_json::from_slice(&b).unwrap(),
            other => panic!("{body}: expected an answer, got {other:?}"),
        }
    }

    #[test]
    fn malformed_messages_get_their_json_rpc_error() {
        for (body, code) in [
            ("not json", -32700),
            ("{\"jsonrpc\": \"2.0\", \"id\": 1,", -32700),
            ("{}", -32600),
            ("[]", -32600),
            ("null", -32600),
            ("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}]", -32600),
            ("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"shutdown\"}", -32600),
            ("{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"shutdown\"}", -32600),
            ("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"shutdown\"}", -32600),
            ("{\"id\":1,\"method\":\"shutdown\"}", -32600),
            ("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"shutdown\"}", -32600),
            ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", -32600),
            ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hover\",\"params\":3}", -32600),
            ("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"$/anything\"}", -32601),
        ] {
            let a = answer(body);
            assert_eq!(a["error"]["code"], code, "{body}: {a}");
            assert_eq!(a["jsonrpc"], "2.0");
        }
        assert_eq!(answer("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"$/x\"}")["id"], 3);
        let a = check(&[b'{', 0xFF, b'}']);
        assert!(matches!(a, Checked::Answer(b) if String::from_utf8_lossy(&b).contains("-32700")));
    }

    fn passed(body: &str) -> (Value, bool) {
        match check(body.as_bytes()) {
            Checked::Pass(text, exit) => (serde_json::from_str(&text).unwrap(), exit),
            other => panic!("{body}: expected to pass, got {other:?}"),
        }
    }

    #[test]
    fn good_messages_pass_and_stray_responses_are_dropped() {
        for body in [
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x/y\",\"params\":[]}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":1}}",
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":null}",
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-1,\"message\":\"no\",\"data\":[]}}",
        ] {
            let (v, exit) = passed(body);
            assert_eq!(v, serde_json::from_str::<Value>(body).unwrap());
            assert!(!exit);
        }
        assert!(passed("{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}").1, "exit ends the reading");
        // A repeated key (which the library's decoder refuses) passes once, the last one.
        let (v, _) = passed(
            "{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{},\"params\":[1],\"meth\\u006fd\":\"initialized\"}",
        );
        assert_eq!(v, json!({"jsonrpc": "2.0", "method": "initialized", "params": [1]}));
        // Responses whose id is the server's are never answered: dropped when malformed.
        for body in [
            "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"result\":null}",
            "{\"jsonrpc\":\"2.0\",\"result\":null}",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null,\"error\":{}}",
            "{\"id\":3,\"result\":null}",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":\"x\",\"message\":\"m\"}}",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":1,\"message\":\"m\",\"extra\":0}}",
        ] {
            assert_eq!(check(body.as_bytes()), Checked::Drop, "{body}");
        }
        // A request that also carries a result is answered, not taken for a response.
        let a = answer("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"shutdown\",\"result\":null}");
        assert_eq!((a["id"].clone(), a["error"]["code"].clone()), (json!(8), json!(-32600)));
        assert_eq!(
            answer("{\"id\":3}")["id"],
            Value::Null,
            "no method: the id may be the server's"
        );
    }

    fn frames(input: &[u8]) -> Vec<Result<String, String>> {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let mut reader = BufReader::new(input);
            let mut out = Vec::new();
            while let Ok(Some(f)) = read_frame(&mut reader, 64).await {
                out.push(match f {
                    Frame::Body(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
                    Frame::Bad(why) => Err(why),
                });
            }
            out
        })
    }

    #[test]
    fn framing_recovers_after_a_bad_header_and_skips_what_is_too_long() {
        let f = frames(b"Content-Length: x\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}Content-Length: 3\r\n\r\n[1]");
        assert!(matches!(&f[..], [Err(_), Ok(a), Ok(b)] if a == "{}" && b == "[1]"), "{f:?}");
        let mut long = vec![b'A'; 100_000];
        long.extend_from_slice(b"\r\nContent-Length: 2\r\n\r\n{}");
        let f = frames(&long);
        // The long line is skipped without being kept; the header after it still counts.
        assert_eq!(f, [Ok("{}".to_string())]);
        let f = frames(&vec![b'A'; 100_000]);
        assert!(
            matches!(&f[..], [Err(e)] if e.contains("header line longer") || e.contains("ended inside")),
            "{f:?}"
        );
        let f = frames(b"Content-Length: 100\r\n\r\n");
        assert!(matches!(&f[..], [Err(e)] if e.contains("over the limit")), "{f:?}");
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character_and_pairs_stay() {
        assert_eq!(repair_surrogates(r#""\ud83d""#), r#""\uFFFD""#);
        assert_eq!(repair_surrogates(r#""\ude00x""#), r#""\uFFFDx""#);
        assert_eq!(repair_surrogates(r#""\ud83d\ude00""#), r#""\ud83d\ude00""#);
        assert_eq!(repair_surrogates(r#""\ud83d\ud83d\ude00""#), r#""\uFFFD\ud83d\ude00""#);
        assert_eq!(repair_surrogates(r#""\\ud83d""#), r#""\\ud83d""#);
        assert_eq!(repair_surrogates(r#""\u0041\ud83d""#), r#""\u0041\uFFFD""#);
        assert_eq!(repair_surrogates("\"é\\ud83d\""), "\"é\\uFFFD\"");
        let body = r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a.wave","languageId":"wave","version":1,"text":"\ud83d"}}}"#;
        let (v, _) = passed(body);
        assert_eq!(v["params"]["textDocument"]["text"], "\u{FFFD}");
    }
}
