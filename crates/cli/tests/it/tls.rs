//! TLS for the tests: a certificate authority and a server certificate
//! for `localhost` made on the spot (rcgen), and a TLS terminator in front
//! of a plain server (tokio-rustls), so `load http` and `load resp --tls`
//! can drive serverlab's own servers, verified, over TLS.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A CA, and a certificate it signed for `localhost` (and only that
/// name), with their PEM files in a directory of their own.
pub struct Pki {
    pub dir: tempfile::TempDir,
    cert_der: CertificateDer<'static>,
    key_der: Vec<u8>,
}

impl Pki {
    /// As `openssl req -x509` makes one: a certificate for `localhost`
    /// that signs itself and marks itself a CA, given to the client as
    /// its own `--cacert`.
    pub fn self_signed() -> Pki {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        Pki::kept(&cert.pem(), &cert, &key)
    }

    /// A CA, and a certificate for `localhost` it signed.
    pub fn new() -> Pki {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "serverlab test CA");
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let key = KeyPair::generate().unwrap();
        let leaf = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        let cert = leaf.signed_by(&key, &ca_cert, &ca_key).unwrap();
        Pki::kept(&ca_cert.pem(), &cert, &key)
    }

    /// The server's `cert` and `key`, and `ca_pem` for the client, in PEM
    /// files of their own.
    fn kept(ca_pem: &str, cert: &rcgen::Certificate, key: &KeyPair) -> Pki {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.pem"), ca_pem).unwrap();
        std::fs::write(dir.path().join("cert.pem"), cert.pem()).unwrap();
        std::fs::write(dir.path().join("key.pem"), key.serialize_pem()).unwrap();
        Pki {
            dir,
            cert_der: cert.der().clone(),
            key_der: key.serialize_der(),
        }
    }

    /// `ca.pem` (for `--cacert`), `cert.pem`, `key.pem`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn ca(&self) -> String {
        self.path("ca.pem").display().to_string()
    }

    fn server_config(&self) -> Arc<rustls::ServerConfig> {
        // ring, as the load's own client uses.
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key_der.clone()));
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![self.cert_der.clone()], key)
            .unwrap();
        Arc::new(config)
    }
}

/// TLS on 127.0.0.1:`port`, each connection's plaintext carried to and
/// from `backend`; it stops when dropped.
pub struct Terminator {
    pub port: u16,
    /// Handshakes completed.
    pub handshakes: Arc<AtomicU64>,
    _rt: tokio::runtime::Runtime,
}

impl Terminator {
    pub fn start(pki: &Pki, backend: SocketAddr) -> Terminator {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let acceptor = tokio_rustls::TlsAcceptor::from(pki.server_config());
        let handshakes = Arc::new(AtomicU64::new(0));
        let counted = handshakes.clone();
        rt.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, counted) = (acceptor.clone(), counted.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    counted.fetch_add(1, Ordering::SeqCst);
                    let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
        Terminator {
            port,
            handshakes,
            _rt: rt,
        }
    }

    pub fn handshakes(&self) -> u64 {
        self.handshakes.load(Ordering::SeqCst)
    }
}
