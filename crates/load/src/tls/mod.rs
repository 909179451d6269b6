//! TLS for the load (`load http`'s `https://` URLs, `load resp --tls`):
//! the client's configuration — Mozilla's roots (webpki-roots), or
//! `--cacert FILE`'s certificates, or with `--insecure` no check of the
//! server's certificate at all — the server name sent (SNI) and checked,
//! a TLS session over a non-blocking socket for the event loop
//! ([`TlsMio`]; the blocking connections around a run use rustls's own
//! `StreamOwned`), and what the handshakes took ([`Handshakes`]).

mod handshakes;
mod session;

pub use handshakes::{HandshakeReport, Handshakes, INSECURE};
pub use session::TlsMio;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The largest `--cacert` file read (a bundle of every public root is
/// about 200 KiB).
pub const MAX_CA_FILE: u64 = 16 << 20;

/// How the server's certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Trust {
    /// Against Mozilla's roots.
    #[default]
    Roots,
    /// Against the certificates of a PEM file (`--cacert`).
    CaFile(PathBuf),
    /// Not at all (`--insecure`): said in the run's output.
    Insecure,
}

/// The client's configuration for `trust`; Err says what is wrong with
/// `--cacert`'s file.
pub fn client_config(trust: &Trust) -> Result<Arc<ClientConfig>, String> {
    // ring, which builds in a fraction of aws-lc-rs's time; rustls marks
    // it deprecated for lacking post-quantum key exchange, which a load
    // generator's measurements do not need.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let config = match trust {
        Trust::Roots => {
            let roots = RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        Trust::CaFile(path) => {
            let (roots, pinned) = ca_file(path)?;
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| format!("--cacert {}: {e}", path.display()))?;
            let check = Check {
                webpki: Some(webpki),
                pinned,
                provider,
            };
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(check))
                .with_no_client_auth()
        }
        Trust::Insecure => {
            let check = Check {
                webpki: None,
                pinned: Vec::new(),
                provider,
            };
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(check))
                .with_no_client_auth()
        }
    };
    Ok(Arc::new(config))
}

/// `--cacert FILE`'s certificates, as roots and as themselves: at least
/// one, every one valid.
fn ca_file(path: &Path) -> Result<(RootCertStore, Vec<CertificateDer<'static>>), String> {
    let bad = |e: &dyn std::fmt::Display| format!("--cacert {}: {e}", path.display());
    let pem = serverlab_util::file::read_capped(path, MAX_CA_FILE).map_err(|e| bad(&e))?;
    let mut roots = RootCertStore::empty();
    let mut pinned = Vec::new();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| bad(&e))?;
        roots.add(cert.clone()).map_err(|e| bad(&e))?;
        pinned.push(cert);
    }
    if roots.is_empty() {
        return Err(bad(
            &"no certificate in it (a PEM file of CERTIFICATE blocks)",
        ));
    }
    Ok((roots, pinned))
}

/// The name sent (SNI) and checked against the certificate: the URL's
/// host (or `--addr`'s), without its port or an IPv6 address's brackets.
pub fn server_name(authority: &str) -> Result<ServerName<'static>, String> {
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None if authority.parse::<std::net::IpAddr>().is_ok() => authority,
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    ServerName::try_from(host.to_string())
        .map_err(|e| format!("'{host}' is not a server name TLS can check: {e}"))
}

/// `--cacert`'s check, or `--insecure`'s none. `--cacert`: a chain to one
/// of its certificates, as any TLS client checks; or the server's own
/// certificate, byte for byte one of them, valid for the name. The second
/// is the self-signed certificate `openssl req -x509` makes, which marks
/// itself a CA, and which webpki would refuse as the end of a chain
/// (CaUsedAsEndEntity) though the user named that very certificate; curl
/// and OpenSSL accept it so. Either way the handshake's signatures are
/// checked.
#[derive(Debug)]
struct Check {
    /// None: `--insecure`, every certificate passes.
    webpki: Option<Arc<WebPkiServerVerifier>>,
    pinned: Vec<CertificateDer<'static>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ServerCertVerifier for Check {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(webpki) = &self.webpki else {
            return Ok(ServerCertVerified::assertion());
        };
        let chained = webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now);
        match chained {
            Err(e)
                if self
                    .pinned
                    .iter()
                    .any(|p| p.as_ref() == end_entity.as_ref()) =>
            {
                let parsed = ParsedCertificate::try_from(end_entity).map_err(|_| e)?;
                rustls::client::verify_server_name(&parsed, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            chained => chained,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A new client session with `name` under `config`.
pub fn session(
    config: &Arc<ClientConfig>,
    name: &ServerName<'static>,
) -> io::Result<ClientConnection> {
    ClientConnection::new(config.clone(), name.clone()).map_err(said)
}

/// A TLS error as an I/O error that says it is one.
pub fn said(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_name_is_the_urls_host() {
        let name = |a: &str| server_name(a).map(|n| n.to_str().into_owned());
        assert_eq!(name("example.com:8443").unwrap(), "example.com");
        assert_eq!(name("example.com").unwrap(), "example.com");
        assert_eq!(name("127.0.0.1:443").unwrap(), "127.0.0.1");
        assert_eq!(name("[::1]:443").unwrap(), "::1");
        assert_eq!(name("::1").unwrap(), "::1");
        assert!(name("bad host:1").is_err());
    }

    #[test]
    fn a_cacert_file_without_certificates_is_refused_naming_it() {
        let dir = std::env::temp_dir().join(format!("serverlab-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = client_config(&Trust::CaFile(empty.clone())).unwrap_err();
        assert!(
            e.starts_with(&format!("--cacert {}", empty.display())),
            "{e}"
        );
        let missing = dir.join("missing.pem");
        let e = client_config(&Trust::CaFile(missing)).unwrap_err();
        assert!(e.contains("missing.pem"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(client_config(&Trust::Roots).is_ok());
        assert!(client_config(&Trust::Insecure).is_ok());
    }
}
