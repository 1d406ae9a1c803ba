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

/// The largest message body accepted (a whole-document `didOpen` of a 1 MB file fits many
/// times over); a larger one is skipped and answered with a parse error.
pub const MAX_MESSAGE: usize = 64 << 20;

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
        while let Ok(Some(body)) = read_frame(&mut from_server).await {
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
            let frame = match read_frame(&mut input).await {
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
                Checked::Pass(text) => {
                    let header = format!("Content-Length: {}\r\n\r\n", text.len());
                    if to_server.write_all(header.as_bytes()).await.is_err()
                        || to_server.write_all(text.as_bytes()).await.is_err()
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
            () = &mut reader => main.await,
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
            // A header line too long to be one: skip to its end.
            let mut rest = Vec::new();
            input.read_until(b'\n', &mut rest).await?;
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
        if let Some((name, value)) = text.split_once(':')
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
    if length > MAX_MESSAGE {
        let skipped =
            tokio::io::copy(&mut (&mut *input).take(length as u64), &mut tokio::io::sink()).await?;
        let _ = skipped;
        return Ok(Some(Frame::Bad(format!(
            "a message of {length} bytes, over the limit of {MAX_MESSAGE}"
        ))));
    }
    let mut body = vec![0; length];
    match input.read_exact(&mut body).await {
        Ok(_) => Ok(Some(Frame::Body(body))),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// What to do with a message.
#[derive(Debug, PartialEq)]
enum Checked {
    /// Pass this text to the library.
    Pass(String),
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
    // The id, when there is one and it is usable: an integer or a string.
    let id = message.get("id");
    let good_id = match id {
        None => None,
        Some(Value::String(_)) => id.cloned(),
        Some(Value::Number(n)) if n.is_i64() => id.cloned(),
        Some(_) => {
            return if message.contains_key("method") {
                invalid(Value::Null, "an id is an integer or a string")
            } else {
                Checked::Drop
            };
        }
    };
    let reply_id = good_id.clone().unwrap_or(Value::Null);
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(reply_id, "a message has \"jsonrpc\": \"2.0\"");
    }
    match message.get("method") {
        Some(Value::String(method)) => {
            if let Some(p) = message.get("params")
                && !(p.is_object() || p.is_array() || p.is_null())
            {
                return invalid(reply_id, "params are an object or an array");
            }
            if method.starts_with("$/") && good_id.is_some() {
                return Checked::Answer(error_reply(
                    reply_id,
                    -32601,
                    &format!("the server has no request `{method}`"),
                ));
            }
        }
        Some(_) => return invalid(reply_id, "a method is a string"),
        None => {
            // A response to one of the server's requests.
            let well_formed = good_id.is_some()
                && (message.contains_key("result") != message.contains_key("error"));
            if !well_formed {
                return Checked::Drop;
            }
        }
    }
    Checked::Pass(text.into_owned())
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

    #[test]
    fn good_messages_pass_and_stray_responses_are_dropped() {
        for body in [
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x/y\",\"params\":[]}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":1}}",
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":null}",
        ] {
            assert_eq!(check(body.as_bytes()), Checked::Pass(body.into()));
        }
        for body in [
            "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"result\":null}",
            "{\"jsonrpc\":\"2.0\",\"result\":null}",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null,\"error\":{}}",
        ] {
            assert_eq!(check(body.as_bytes()), Checked::Drop, "{body}");
        }
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
        let Checked::Pass(text) = check(body.as_bytes()) else { panic!("repaired and passed") };
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["params"]["textDocument"]["text"], "\u{FFFD}");
    }
}
