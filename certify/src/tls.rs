//! HTTPS for certify. The probes write requests on connections they own
//! (closing one before reading, holding a last byte back until a barrier), so
//! TLS wraps the connection itself rather than living inside an HTTP library:
//! rustls with ring, trusting the system's roots, or only the CAs of
//! `--ca-cert FILE`. A failed handshake is named by its reason (expired,
//! unknown issuer, name mismatch, ...), never left as an opaque I/O error.

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{CertificateError, RootCertStore};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// Which certificate authorities an HTTPS certification trusts.
#[derive(Debug, Clone, Default)]
pub enum Trust {
    /// The system's roots (the platform's certificate store).
    #[default]
    System,
    /// Only the CAs of a PEM file (`--ca-cert FILE`), instead of the system's.
    CaFile {
        /// The file, as given.
        path: String,
        /// Its certificates.
        roots: Arc<RootCertStore>,
    },
}

/// Why a `--ca-cert` file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The file cannot be read.
    #[error("--ca-cert {path}: cannot read it: {source}")]
    Read {
        /// The file.
        path: String,
        /// The OS error.
        source: io::Error,
    },
    /// The file holds no PEM certificate, or a broken one.
    #[error("--ca-cert {path}: {why}")]
    Pem {
        /// The file.
        path: String,
        /// What is wrong with it.
        why: String,
    },
}

impl Trust {
    /// The CAs of a PEM file (one or more `CERTIFICATE` blocks).
    pub fn ca_file(path: &Path) -> Result<Trust, TrustError> {
        let shown = path.display().to_string();
        let pem = |why: String| TrustError::Pem {
            path: shown.clone(),
            why,
        };
        let bytes = std::fs::read(path).map_err(|source| TrustError::Read {
            path: shown.clone(),
            source,
        })?;
        let certs = CertificateDer::pem_slice_iter(&bytes)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| pem(format!("not a PEM certificate file ({e})")))?;
        if certs.is_empty() {
            return Err(pem("no PEM certificate in the file".to_owned()));
        }
        let mut roots = RootCertStore::empty();
        for (n, cert) in certs.into_iter().enumerate() {
            roots
                .add(cert)
                .map_err(|e| pem(format!("certificate {} is unusable as a CA: {e}", n + 1)))?;
        }
        Ok(Trust::CaFile {
            path: shown,
            roots: Arc::new(roots),
        })
    }

    /// What is trusted, for messages.
    fn describe(&self) -> String {
        match self {
            Trust::System => "the system's roots".to_owned(),
            Trust::CaFile { path, .. } => format!("the CAs of --ca-cert {path}"),
        }
    }

    fn roots(&self) -> Result<Arc<RootCertStore>, TlsFailure> {
        match self {
            Trust::CaFile { roots, .. } => Ok(roots.clone()),
            Trust::System => {
                let found = rustls_native_certs::load_native_certs();
                let mut roots = RootCertStore::empty();
                roots.add_parsable_certificates(found.certs);
                if roots.is_empty() {
                    let why = if found.errors.is_empty() {
                        "the certificate store is empty".to_owned()
                    } else {
                        found
                            .errors
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    };
                    return Err(TlsFailure::NoRoots(why));
                }
                Ok(Arc::new(roots))
            }
        }
    }
}

/// Why a TLS handshake failed: the reasons a user can act on have their own
/// variant, the rest carry rustls's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsFailure {
    /// The server's certificate is past its `notAfter`.
    #[error("the certificate has expired")]
    Expired,
    /// The server's certificate is before its `notBefore`.
    #[error("the certificate is not valid yet")]
    NotYetValid,
    /// The certificate chains to no trusted CA.
    #[error("unknown issuer: the certificate chains to none of {trusted}")]
    UnknownIssuer {
        /// What is trusted.
        trusted: String,
    },
    /// The certificate is valid, but for other names.
    #[error("name mismatch: the certificate is not valid for {expected} (it names {})", names(.presented))]
    NameMismatch {
        /// The host asked for.
        expected: String,
        /// The names the certificate carries.
        presented: Vec<String>,
    },
    /// Another certificate problem.
    #[error("bad certificate: {0}")]
    Certificate(String),
    /// The server answered the handshake with an alert.
    #[error("handshake failure: the server refused it ({0})")]
    Refused(String),
    /// The server answered with something that is not TLS.
    #[error("handshake failure: the server does not speak TLS on this port (plain HTTP?)")]
    NotTls,
    /// Any other handshake failure.
    #[error("handshake failure: {0}")]
    Handshake(String),
    /// The system has no trusted roots to check a certificate against.
    #[error("no trusted roots on this system ({0}); --ca-cert FILE names a CA to trust")]
    NoRoots(String),
    /// The host cannot be a TLS server name.
    #[error("the host is not a valid TLS server name")]
    BadName,
}

/// The certificate's names as a reader writes them: rustls gives each in its
/// debug form (`DnsName("api.example")`, `IpAddress(10.0.0.1)`).
fn names(presented: &[String]) -> String {
    if presented.is_empty() {
        return "no usable name".to_owned();
    }
    presented
        .iter()
        .map(|n| {
            let inner = ["DnsName(", "IpAddress("]
                .iter()
                .find_map(|p| n.strip_prefix(p).and_then(|r| r.strip_suffix(')')))
                .unwrap_or(n);
            inner.trim_matches('"').to_owned()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A connection, plain or inside TLS: the client reads and writes either alike.
#[derive(Debug)]
pub(crate) enum Conn {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP (boxed: the TLS state is large).
    Tls(Box<TlsStream<TcpStream>>),
}

impl Conn {
    /// Whether a read error is the peer's close without TLS's `close_notify`,
    /// which is read as a plain close: HTTP's own framing (a length, chunks)
    /// says whether the answer is whole, exactly as over TCP.
    pub(crate) fn is_unannounced_close(&self, e: &io::Error) -> bool {
        matches!(self, Conn::Tls(_)) && e.kind() == io::ErrorKind::UnexpectedEof
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_flush(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// What a client needs to open TLS to one host.
#[derive(Clone)]
pub(crate) struct Tls {
    connector: TlsConnector,
    name: ServerName<'static>,
    trusted: String,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("name", &self.name)
            .field("trusted", &self.trusted)
            .finish()
    }
}

impl Tls {
    /// TLS to `host` (as written in the URL).
    pub(crate) fn new(host: &str, trust: &Trust) -> Result<Tls, TlsFailure> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(bare.to_owned()).map_err(|_| TlsFailure::BadName)?;
        let roots = trust.roots()?;
        // rustls marks ring's provider deprecated for lacking post-quantum key
        // exchange; certify's handshakes carry short-lived test traffic to a
        // sandbox, and ring builds with a C compiler alone.
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsFailure::Handshake(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        // The client speaks HTTP/1.1 only: a server offering HTTP/2 must not pick it.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            connector: TlsConnector::from(Arc::new(config)),
            name,
            trusted: trust.describe(),
        })
    }

    /// The handshake over a connected socket.
    pub(crate) async fn handshake(&self, tcp: TcpStream) -> Result<Conn, TlsFailure> {
        match self.connector.connect(self.name.clone(), tcp).await {
            Ok(stream) => Ok(Conn::Tls(Box::new(stream))),
            Err(e) => Err(self.failure(&e)),
        }
    }

    /// The reason a handshake failed, from rustls's error inside the I/O error.
    fn failure(&self, e: &io::Error) -> TlsFailure {
        let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) else {
            return match e.kind() {
                io::ErrorKind::UnexpectedEof => TlsFailure::Handshake(
                    "the server closed the connection during the handshake".to_owned(),
                ),
                _ => TlsFailure::Handshake(e.to_string()),
            };
        };
        match inner {
            rustls::Error::InvalidCertificate(c) => self.certificate(c),
            rustls::Error::AlertReceived(alert) => TlsFailure::Refused(format!("{alert:?}")),
            rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType) => {
                TlsFailure::NotTls
            }
            other => TlsFailure::Handshake(other.to_string()),
        }
    }

    fn certificate(&self, c: &CertificateError) -> TlsFailure {
        match c {
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                TlsFailure::Expired
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                TlsFailure::NotYetValid
            }
            CertificateError::UnknownIssuer => TlsFailure::UnknownIssuer {
                trusted: self.trusted.clone(),
            },
            CertificateError::NotValidForName => TlsFailure::NameMismatch {
                expected: self.name.to_str().into_owned(),
                presented: Vec::new(),
            },
            CertificateError::NotValidForNameContext {
                expected,
                presented,
            } => TlsFailure::NameMismatch {
                expected: expected.to_str().into_owned(),
                presented: presented.clone(),
            },
            other => TlsFailure::Certificate(other.to_string()),
        }
    }
}
