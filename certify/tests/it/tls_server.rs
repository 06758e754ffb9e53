//! A loopback TLS server for the HTTPS tests: a CA and server certificates
//! generated in the test, and a TLS-terminating proxy in front of a plain
//! HTTP server (the simulator), so certify speaks HTTPS to the very server its
//! plain-HTTP tests know. The CLI's tests include this file by path, so both
//! crates test against one server.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

/// A certificate authority made for one test.
pub struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// When a server certificate is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validity {
    /// From long ago to far ahead.
    Current,
    /// Through 2021 only.
    Expired,
}

/// A server's certificate chain and key.
pub struct ServerCert {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

impl Ca {
    /// A fresh CA named `name`.
    pub fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("CA key");
        Ca {
            issuer: CertifiedIssuer::self_signed(params, key).expect("CA certificate"),
        }
    }

    /// The CA's certificate written as PEM into `dir`.
    pub fn write_pem(&self, dir: &Path) -> PathBuf {
        let path = dir.join("ca.pem");
        std::fs::write(&path, self.issuer.pem()).expect("CA file written");
        path
    }

    /// A server certificate for `names` (IP addresses or DNS names), signed by this CA.
    pub fn server_cert(&self, names: &[&str], validity: Validity) -> ServerCert {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).expect("server params");
        params
            .distinguished_name
            .push(DnType::CommonName, "lostreply test server");
        if validity == Validity::Expired {
            params.not_before = rcgen::date_time_ymd(2021, 1, 1);
            params.not_after = rcgen::date_time_ymd(2021, 12, 31);
        }
        let key = KeyPair::generate().expect("server key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("server certificate");
        ServerCert {
            chain: vec![cert.der().clone(), self.issuer.der().clone()],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        }
    }
}

/// TLS on 127.0.0.1 in front of a plain TCP server: each connection is
/// decrypted and copied both ways. Dropped, it stops accepting and closes
/// every connection it holds.
pub struct TlsProxy {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl TlsProxy {
    /// Listens on 127.0.0.1:0 with `cert`, forwarding to `upstream`.
    pub async fn start(cert: ServerCert, upstream: SocketAddr) -> TlsProxy {
        // The test server uses the provider the client does (ring's).
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(cert.chain, cert.key)
            .expect("server certificate accepted");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                connections.spawn(async move {
                    // A refused handshake is what some tests are about: the
                    // connection just ends.
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let Ok(mut plain) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
                while connections.try_join_next().is_some() {}
            }
        });
        TlsProxy { addr, task }
    }

    /// `https://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("https://127.0.0.1:{}", self.addr.port())
    }

    /// `127.0.0.1:PORT`, as errors name it.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.addr.port())
    }
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}
