//! The Jupyter wire format (messaging protocol 5.3): multipart frames <-> [`Message`].
//!
//! A message on a ROUTER socket is
//! `[identity..., b"<IDS|MSG>", signature, header, parent_header, metadata, content, buffer...]`
//! where `signature` is the lowercase hex HMAC-SHA256 of the four JSON frames that follow it,
//! keyed with the connection file's `key` (an empty key turns signing off: the signature frame is
//! then empty and not checked). On the IOPub (PUB) socket the identity part is the topic.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::Sha256;

/// The protocol version this kernel speaks, written in every header it sends.
pub const PROTOCOL_VERSION: &str = "5.3";

/// The frame that separates the routing identities from the message proper.
pub const DELIMITER: &[u8] = b"<IDS|MSG>";

type HmacSha256 = Hmac<Sha256>;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum WireError {
    #[error("no <IDS|MSG> delimiter frame in a message of {0} frames")]
    MissingDelimiter(usize),
    #[error("message has {0} frames after the delimiter, needs at least 5 (signature, header, parent_header, metadata, content)")]
    TooFewFrames(usize),
    #[error("message is not signed but the connection uses a key")]
    MissingSignature,
    #[error("signature frame is not hex")]
    SignatureNotHex,
    #[error("signature does not match the message (wrong key or tampered message)")]
    BadSignature,
    #[error("{frame} frame is not valid JSON: {error}")]
    InvalidJson { frame: &'static str, error: String },
    #[error("{0} frame is not a JSON object")]
    NotAnObject(&'static str),
    #[error("{frame} is not a valid message header: {error}")]
    BadHeader { frame: &'static str, error: String },
    #[error("{frame} frame has {bytes} bytes, over the {limit}-byte limit for headers")]
    Oversized { frame: &'static str, bytes: usize, limit: usize },
}

/// The most bytes a header or parent header frame may have. Real ones have a few hundred; every
/// reply and status message repeats the request's header as its parent, so a huge one would be
/// copied into each queue the kernel sends to (the flood that filled 22 GB in the fuzz test).
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// Signs and verifies messages with HMAC-SHA256; a no-op for an empty key.
#[derive(Clone)]
pub struct Signer {
    mac: Option<HmacSha256>,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer").field("signing", &self.mac.is_some()).finish()
    }
}

impl Signer {
    /// A signer for `key` (the connection file's `key`, as bytes). An empty key disables signing.
    pub fn new(key: &[u8]) -> Signer {
        let mac = if key.is_empty() {
            None
        } else {
            // HMAC accepts keys of any length; this cannot fail.
            Some(HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length"))
        };
        Signer { mac }
    }

    /// Whether messages are signed (the key is not empty).
    pub fn is_signing(&self) -> bool {
        self.mac.is_some()
    }

    /// Lowercase hex signature of `parts` (header, parent_header, metadata, content), or the empty
    /// string when signing is off.
    pub fn sign(&self, parts: &[&[u8]]) -> String {
        match &self.mac {
            None => String::new(),
            Some(mac) => {
                let mut mac = mac.clone();
                for part in parts {
                    mac.update(part);
                }
                hex::encode(mac.finalize().into_bytes())
            }
        }
    }

    /// Checks `signature` (hex, as received) against `parts` in constant time. Always passes when
    /// signing is off.
    pub fn verify(&self, signature: &[u8], parts: &[&[u8]]) -> Result<(), WireError> {
        let Some(mac) = &self.mac else { return Ok(()) };
        if signature.is_empty() {
            return Err(WireError::MissingSignature);
        }
        let expected = hex::decode(signature).map_err(|_| WireError::SignatureNotHex)?;
        let mut mac = mac.clone();
        for part in parts {
            mac.update(part);
        }
        // `verify_slice` compares in constant time.
        mac.verify_slice(&expected).map_err(|_| WireError::BadSignature)
    }
}

/// A message header (also the shape of `parent_header`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub msg_id: String,
    #[serde(default, deserialize_with = "string_or_null")]
    pub session: String,
    #[serde(default, deserialize_with = "string_or_null")]
    pub username: String,
    /// ISO 8601 with a time zone.
    #[serde(default, deserialize_with = "string_or_null")]
    pub date: String,
    pub msg_type: String,
    #[serde(default, deserialize_with = "string_or_null")]
    pub version: String,
    /// Fields this kernel does not know (kept so that a parent header is echoed whole).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Optional header strings: a missing or `null` value reads as "".
fn string_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

impl Header {
    /// A fresh header: new uuid4 `msg_id`, the current time, protocol version 5.3.
    pub fn new(msg_type: &str, session: &str, username: &str) -> Header {
        Header {
            msg_id: uuid::Uuid::new_v4().to_string(),
            session: session.to_owned(),
            username: username.to_owned(),
            date: now_iso8601(),
            msg_type: msg_type.to_owned(),
            version: PROTOCOL_VERSION.to_owned(),
            extra: Map::new(),
        }
    }
}

/// The current UTC time, ISO 8601 with microseconds and a `Z` time zone.
pub fn now_iso8601() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// Who this kernel says it is in the headers it writes.
#[derive(Clone, Debug)]
pub struct Identity {
    /// The kernel's session id (a uuid4, fixed for the life of the process).
    pub session: String,
    pub username: String,
}

impl Identity {
    pub fn new() -> Identity {
        let username = std::env::var("USER").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| "kernel".to_owned());
        Identity { session: uuid::Uuid::new_v4().to_string(), username }
    }
}

impl Default for Identity {
    fn default() -> Self {
        Identity::new()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// Routing identities (ROUTER sockets) or the topic (IOPub), before the delimiter.
    pub identities: Vec<Vec<u8>>,
    pub header: Header,
    /// `None` is sent as `{}`.
    pub parent_header: Option<Header>,
    pub metadata: Map<String, Value>,
    pub content: Value,
    pub buffers: Vec<Vec<u8>>,
}

fn parse_object(frame: &'static str, bytes: &[u8]) -> Result<Map<String, Value>, WireError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| WireError::InvalidJson { frame, error: e.to_string() })?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(WireError::NotAnObject(frame)),
    }
}

fn parse_header(frame: &'static str, map: Map<String, Value>) -> Result<Header, WireError> {
    serde_json::from_value(Value::Object(map)).map_err(|e| WireError::BadHeader { frame, error: e.to_string() })
}

impl Message {
    /// Parses and verifies the frames of one received message.
    pub fn from_frames<F: AsRef<[u8]>>(frames: &[F], signer: &Signer) -> Result<Message, WireError> {
        let delimiter = frames.iter().position(|f| f.as_ref() == DELIMITER).ok_or(WireError::MissingDelimiter(frames.len()))?;
        let identities = frames[..delimiter].iter().map(|f| f.as_ref().to_vec()).collect();
        let rest = &frames[delimiter + 1..];
        if rest.len() < 5 {
            return Err(WireError::TooFewFrames(rest.len()));
        }
        let (signature, header, parent, metadata, content) = (rest[0].as_ref(), rest[1].as_ref(), rest[2].as_ref(), rest[3].as_ref(), rest[4].as_ref());
        signer.verify(signature, &[header, parent, metadata, content])?;
        for (frame, bytes) in [("header", header), ("parent_header", parent)] {
            if bytes.len() > MAX_HEADER_BYTES {
                return Err(WireError::Oversized { frame, bytes: bytes.len(), limit: MAX_HEADER_BYTES });
            }
        }

        let header = parse_header("header", parse_object("header", header)?)?;
        let parent = parse_object("parent_header", parent)?;
        let parent_header = if parent.is_empty() { None } else { Some(parse_header("parent_header", parent)?) };
        let metadata = parse_object("metadata", metadata)?;
        let content = Value::Object(parse_object("content", content)?);
        let buffers = rest[5..].iter().map(|f| f.as_ref().to_vec()).collect();
        Ok(Message { identities, header, parent_header, metadata, content, buffers })
    }

    /// The signed frames of this message, ready to send.
    pub fn to_frames(&self, signer: &Signer) -> Vec<Vec<u8>> {
        // Serialising these types cannot fail (string keys, no non-finite floats from JSON).
        let header = serde_json::to_vec(&self.header).expect("header serialises");
        let parent = match &self.parent_header {
            Some(p) => serde_json::to_vec(p).expect("header serialises"),
            None => b"{}".to_vec(),
        };
        let metadata = serde_json::to_vec(&self.metadata).expect("metadata serialises");
        let content = serde_json::to_vec(&self.content).expect("content serialises");
        let signature = signer.sign(&[&header, &parent, &metadata, &content]);

        let mut frames = Vec::with_capacity(self.identities.len() + 6 + self.buffers.len());
        frames.extend(self.identities.iter().cloned());
        frames.push(DELIMITER.to_vec());
        frames.push(signature.into_bytes());
        frames.push(header);
        frames.push(parent);
        frames.push(metadata);
        frames.push(content);
        frames.extend(self.buffers.iter().cloned());
        frames
    }

    /// A new message with no parent and no identities.
    pub fn new(msg_type: &str, content: Value, me: &Identity) -> Message {
        Message { identities: Vec::new(), header: Header::new(msg_type, &me.session, &me.username), parent_header: None, metadata: Map::new(), content, buffers: Vec::new() }
    }

    /// A reply to this request on the same socket: the request's identities are kept and its
    /// header becomes the reply's `parent_header`.
    pub fn reply(&self, msg_type: &str, content: Value, me: &Identity) -> Message {
        Message { identities: self.identities.clone(), parent_header: Some(self.header.clone()), ..Message::new(msg_type, content, me) }
    }

    /// A message caused by this request, for the IOPub socket: `parent_header` is the request's
    /// header and the identity frame is the topic `kernel.<session>.<msg_type>`.
    pub fn iopub(&self, msg_type: &str, content: Value, me: &Identity) -> Message {
        Message { identities: vec![format!("kernel.{}.{}", me.session, msg_type).into_bytes()], parent_header: Some(self.header.clone()), ..Message::new(msg_type, content, me) }
    }

    pub fn msg_type(&self) -> &str {
        &self.header.msg_type
    }

    /// `content[key]`, or `Value::Null` when absent.
    pub fn get(&self, key: &str) -> &Value {
        self.content.get(key).unwrap_or(&Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(msg_type: &str) -> Message {
        let client = Identity { session: "client-session".into(), username: "alice".into() };
        let mut m = Message::new(msg_type, json!({"code": "print hi", "silent": false}), &client);
        m.identities = vec![b"peer-1".to_vec(), b"peer-2".to_vec()];
        m
    }

    fn frames_of(parts: &[&[u8]]) -> Vec<Vec<u8>> {
        parts.iter().map(|p| p.to_vec()).collect()
    }

    #[test]
    fn round_trip_keeps_everything() {
        let signer = Signer::new(b"secret-key");
        let mut m = request("execute_request");
        m.buffers = vec![vec![0, 1, 2], vec![]];
        m.metadata.insert("k".into(), json!(1));
        let frames = m.to_frames(&signer);
        assert_eq!(frames[2], DELIMITER);
        let back = Message::from_frames(&frames, &signer).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn header_fields_follow_the_spec() {
        let me = Identity::new();
        let m = Message::new("status", json!({}), &me);
        assert_eq!(m.header.version, "5.3");
        assert_eq!(m.header.session, me.session);
        assert!(uuid::Uuid::parse_str(&m.header.msg_id).is_ok());
        let date = chrono::DateTime::parse_from_rfc3339(&m.header.date).unwrap();
        assert_eq!(date.offset().local_minus_utc(), 0);
        let json = serde_json::to_value(&m.header).unwrap();
        for key in ["msg_id", "session", "username", "date", "msg_type", "version"] {
            assert!(json.get(key).is_some(), "{key} missing");
        }
    }

    #[test]
    fn signature_is_hmac_sha256_of_the_four_json_frames() {
        let signer = Signer::new(b"key");
        let frames = request("kernel_info_request").to_frames(&signer);
        let d = 2; // two identities
        let mut mac = HmacSha256::new_from_slice(b"key").unwrap();
        for f in &frames[d + 2..d + 6] {
            mac.update(f);
        }
        assert_eq!(frames[d + 1], hex::encode(mac.finalize().into_bytes()).into_bytes());
    }

    #[test]
    fn wrong_key_is_rejected() {
        let frames = request("execute_request").to_frames(&Signer::new(b"one"));
        assert_eq!(Message::from_frames(&frames, &Signer::new(b"two")), Err(WireError::BadSignature));
    }

    #[test]
    fn tampered_content_is_rejected() {
        let signer = Signer::new(b"secret");
        let mut frames = request("execute_request").to_frames(&signer);
        let content = frames.len() - 1;
        frames[content] = br#"{"code": "rm -rf /", "silent": false}"#.to_vec();
        assert_eq!(Message::from_frames(&frames, &signer), Err(WireError::BadSignature));
    }

    #[test]
    fn tampered_header_is_rejected() {
        let signer = Signer::new(b"secret");
        let mut frames = request("execute_request").to_frames(&signer);
        let header = String::from_utf8(frames[4].clone()).unwrap();
        frames[4] = header.replace("execute_request", "shutdown_request").into_bytes();
        assert_eq!(Message::from_frames(&frames, &signer), Err(WireError::BadSignature));
    }

    #[test]
    fn missing_or_garbled_signature_is_rejected() {
        let signer = Signer::new(b"secret");
        let mut frames = request("execute_request").to_frames(&signer);
        frames[3] = Vec::new();
        assert_eq!(Message::from_frames(&frames, &signer), Err(WireError::MissingSignature));
        frames[3] = b"not hex at all".to_vec();
        assert_eq!(Message::from_frames(&frames, &signer), Err(WireError::SignatureNotHex));
        frames[3] = b"00ff".to_vec();
        assert_eq!(Message::from_frames(&frames, &signer), Err(WireError::BadSignature));
    }

    #[test]
    fn a_huge_header_is_dropped_but_a_huge_content_is_not() {
        let signer = Signer::new(b"secret");
        let mut m = request("execute_request");
        m.metadata.insert("pad".into(), json!("x".repeat(MAX_HEADER_BYTES)));
        m.content = json!({"code": "x".repeat(4 * MAX_HEADER_BYTES)});
        assert!(Message::from_frames(&m.to_frames(&signer), &signer).is_ok());
        m.header.username = "x".repeat(MAX_HEADER_BYTES);
        let bytes = serde_json::to_vec(&m.header).unwrap().len();
        assert_eq!(Message::from_frames(&m.to_frames(&signer), &signer), Err(WireError::Oversized { frame: "header", bytes, limit: MAX_HEADER_BYTES }));
        let mut reply = request("execute_reply");
        reply.parent_header = Some(m.header.clone());
        assert!(matches!(Message::from_frames(&reply.to_frames(&signer), &signer), Err(WireError::Oversized { frame: "parent_header", .. })));
    }

    #[test]
    fn uppercase_hex_signature_is_accepted() {
        let signer = Signer::new(b"secret");
        let mut frames = request("execute_request").to_frames(&signer);
        frames[3] = frames[3].to_ascii_uppercase();
        assert!(Message::from_frames(&frames, &signer).is_ok());
    }

    #[test]
    fn missing_delimiter_is_rejected() {
        let signer = Signer::new(b"");
        let frames = frames_of(&[b"id", b"", b"{}", b"{}", b"{}", b"{}"]);
        assert_eq!(Message::from_frames(&frames, &signer), Err(WireError::MissingDelimiter(6)));
    }

    #[test]
    fn too_few_frames_are_rejected() {
        let signer = Signer::new(b"");
        let frames = frames_of(&[DELIMITER, b"", b"{}", b"{}"]);
        assert_eq!(Message::from_frames(&frames, &signer), Err(WireError::TooFewFrames(3)));
    }

    #[test]
    fn empty_key_means_no_signing() {
        let signer = Signer::new(b"");
        assert!(!signer.is_signing());
        let m = request("kernel_info_request");
        let frames = m.to_frames(&signer);
        assert!(frames[3].is_empty(), "signature frame must be empty without a key");
        assert_eq!(Message::from_frames(&frames, &signer).unwrap(), m);
        // Whatever is in the signature frame is ignored without a key.
        let mut frames = frames;
        frames[3] = b"deadbeef".to_vec();
        assert!(Message::from_frames(&frames, &signer).is_ok());
    }

    #[test]
    fn garbage_frames_are_errors_not_panics() {
        let signer = Signer::new(b"");
        let cases: Vec<Vec<Vec<u8>>> = vec![
            vec![],
            frames_of(&[b"\xff\xfe"]),
            frames_of(&[DELIMITER]),
            frames_of(&[DELIMITER, b"", b"not json", b"{}", b"{}", b"{}"]),
            frames_of(&[DELIMITER, b"", b"[1,2]", b"{}", b"{}", b"{}"]),
            frames_of(&[DELIMITER, b"", b"{\"msg_id\": 3}", b"{}", b"{}", b"{}"]),
            frames_of(&[DELIMITER, b"", b"{\"msg_id\":\"a\",\"msg_type\":\"x\"}", b"\xff", b"{}", b"{}"]),
            frames_of(&[DELIMITER, b"", b"{\"msg_id\":\"a\",\"msg_type\":\"x\"}", b"{}", b"null", b"{}"]),
            frames_of(&[DELIMITER, b"", b"{\"msg_id\":\"a\",\"msg_type\":\"x\"}", b"{}", b"{}", b"\"s\""]),
            frames_of(&[DELIMITER, b"", b"{\"msg_id\":\"a\",\"msg_type\":\"x\"}", b"{\"a\":1}", b"{}", b"{}"]),
        ];
        for frames in cases {
            assert!(Message::from_frames(&frames, &signer).is_err(), "accepted {frames:?}");
        }
        let ok = frames_of(&[DELIMITER, b"", b"{\"msg_id\":\"a\",\"msg_type\":\"x\",\"date\":null}", b"{}", b"{}", b"{}"]);
        let m = Message::from_frames(&ok, &signer).unwrap();
        assert_eq!(m.msg_type(), "x");
        assert!(m.parent_header.is_none());
        assert!(m.identities.is_empty());
    }

    #[test]
    fn reply_keeps_identities_and_sets_parent() {
        let me = Identity::new();
        let req = request("kernel_info_request");
        let rep = req.reply("kernel_info_reply", json!({"status": "ok"}), &me);
        assert_eq!(rep.identities, req.identities);
        assert_eq!(rep.parent_header.as_ref(), Some(&req.header));
        assert_eq!(rep.header.session, me.session);
        assert_ne!(rep.header.msg_id, req.header.msg_id);
        assert_eq!(rep.msg_type(), "kernel_info_reply");

        let status = req.iopub("status", json!({"execution_state": "busy"}), &me);
        assert_eq!(status.identities, vec![format!("kernel.{}.status", me.session).into_bytes()]);
        assert_eq!(status.parent_header.as_ref(), Some(&req.header));
    }

    #[test]
    fn unknown_header_fields_are_echoed_in_parent_header() {
        let signer = Signer::new(b"k");
        let mut req = request("execute_request");
        req.header.extra.insert("subshell_id".into(), json!("abc"));
        let parsed = Message::from_frames(&req.to_frames(&signer), &signer).unwrap();
        let rep = parsed.reply("execute_reply", json!({}), &Identity::new());
        let frames = rep.to_frames(&signer);
        let parent: Value = serde_json::from_slice(&frames[5]).unwrap();
        assert_eq!(parent["subshell_id"], "abc");
        assert_eq!(parent["msg_id"], json!(req.header.msg_id));
    }
}
