//! The connection file a Jupyter frontend writes for a kernel it starts (`{connection_file}` in
//! the kernelspec's argv): where to bind the five sockets and the key that signs messages.

use serde::Deserialize;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    #[error("cannot read connection file {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("connection file is not valid: {0}")]
    Invalid(String),
    #[error("connection file asks for transport {0:?}; this kernel supports only \"tcp\"")]
    UnsupportedTransport(String),
    #[error("connection file asks for signature_scheme {0:?}; this kernel supports only \"hmac-sha256\"")]
    UnsupportedSignatureScheme(String),
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ConnectionInfo {
    #[serde(default = "default_transport")]
    pub transport: String,
    pub ip: String,
    pub shell_port: u16,
    pub iopub_port: u16,
    pub stdin_port: u16,
    pub control_port: u16,
    pub hb_port: u16,
    /// The HMAC key; empty means messages are not signed.
    #[serde(default)]
    pub key: String,
    #[serde(default = "default_scheme")]
    pub signature_scheme: String,
    #[serde(default)]
    pub kernel_name: String,
}

fn default_transport() -> String {
    "tcp".to_owned()
}

fn default_scheme() -> String {
    "hmac-sha256".to_owned()
}

impl ConnectionInfo {
    pub fn from_file(path: &Path) -> Result<ConnectionInfo, ConnectionError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConnectionError::Read { path: path.display().to_string(), error })?;
        ConnectionInfo::from_json(&text)
    }

    pub fn from_json(text: &str) -> Result<ConnectionInfo, ConnectionError> {
        let info: ConnectionInfo = serde_json::from_str(text).map_err(|e| ConnectionError::Invalid(e.to_string()))?;
        if info.transport != "tcp" {
            return Err(ConnectionError::UnsupportedTransport(info.transport));
        }
        if info.signature_scheme != "hmac-sha256" {
            return Err(ConnectionError::UnsupportedSignatureScheme(info.signature_scheme));
        }
        if info.ip.trim().is_empty() {
            return Err(ConnectionError::Invalid("\"ip\" is empty".to_owned()));
        }
        Ok(info)
    }

    /// The ZeroMQ endpoint for `port`, e.g. `tcp://127.0.0.1:5555` (`*` binds every interface;
    /// IPv6 addresses are bracketed).
    pub fn endpoint(&self, port: u16) -> String {
        let ip = self.ip.trim();
        let host = if ip == "*" {
            "0.0.0.0".to_owned()
        } else if ip.contains(':') && !ip.starts_with('[') {
            format!("[{ip}]")
        } else {
            ip.to_owned()
        };
        format!("{}://{}:{}", self.transport, host, port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{
        "shell_port": 50001, "iopub_port": 50002, "stdin_port": 50003,
        "control_port": 50004, "hb_port": 50005, "ip": "127.0.0.1",
        "key": "a0436f6c-1916-498b-8eb9-e81ab9368e84", "transport": "tcp",
        "signature_scheme": "hmac-sha256", "kernel_name": "bach"
    }"#;

    #[test]
    fn parses_a_jupyter_connection_file() {
        let info = ConnectionInfo::from_json(SAMPLE).unwrap();
        assert_eq!(info.shell_port, 50001);
        assert_eq!(info.iopub_port, 50002);
        assert_eq!(info.stdin_port, 50003);
        assert_eq!(info.control_port, 50004);
        assert_eq!(info.hb_port, 50005);
        assert_eq!(info.key, "a0436f6c-1916-498b-8eb9-e81ab9368e84");
        assert_eq!(info.kernel_name, "bach");
        assert_eq!(info.endpoint(info.shell_port), "tcp://127.0.0.1:50001");
    }

    #[test]
    fn reads_from_a_file() {
        let path = std::env::temp_dir().join(format!("bach-conn-{}.json", std::process::id()));
        std::fs::write(&path, SAMPLE).unwrap();
        let info = ConnectionInfo::from_file(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(info.hb_port, 50005);
        let missing = ConnectionInfo::from_file(Path::new("/nonexistent/conn.json")).unwrap_err();
        assert!(missing.to_string().contains("/nonexistent/conn.json"), "{missing}");
    }

    #[test]
    fn defaults_for_optional_fields() {
        let info = ConnectionInfo::from_json(r#"{"shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4,"hb_port":5,"ip":"0.0.0.0"}"#).unwrap();
        assert_eq!(info.transport, "tcp");
        assert_eq!(info.signature_scheme, "hmac-sha256");
        assert_eq!(info.key, "");
    }

    #[test]
    fn only_hmac_sha256_is_accepted() {
        let text = SAMPLE.replace("hmac-sha256", "hmac-md5");
        let err = ConnectionInfo::from_json(&text).unwrap_err();
        assert!(matches!(err, ConnectionError::UnsupportedSignatureScheme(ref s) if s == "hmac-md5"));
        assert!(err.to_string().contains("hmac-sha256"), "{err}");
    }

    #[test]
    fn only_tcp_is_accepted() {
        let text = SAMPLE.replace("\"tcp\"", "\"ipc\"");
        let err = ConnectionInfo::from_json(&text).unwrap_err();
        assert!(matches!(err, ConnectionError::UnsupportedTransport(ref s) if s == "ipc"));
    }

    #[test]
    fn malformed_files_are_errors() {
        for text in ["", "not json", "[]", r#"{"ip": "127.0.0.1"}"#, &SAMPLE.replace("50001", "\"x\"")] {
            assert!(matches!(ConnectionInfo::from_json(text), Err(ConnectionError::Invalid(_))), "accepted {text:?}");
        }
        assert!(ConnectionInfo::from_json(&SAMPLE.replace("70000", "1")).is_ok());
        assert!(ConnectionInfo::from_json(&SAMPLE.replace("50001", "70000")).is_err(), "port out of range");
    }

    #[test]
    fn endpoints_for_wildcard_and_ipv6() {
        let mut info = ConnectionInfo::from_json(SAMPLE).unwrap();
        info.ip = "*".into();
        assert_eq!(info.endpoint(9), "tcp://0.0.0.0:9");
        info.ip = "::1".into();
        assert_eq!(info.endpoint(9), "tcp://[::1]:9");
    }
}
