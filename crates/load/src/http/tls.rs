//! TLS for `load http` (`https://` URLs): the client's configuration —
//! Mozilla's roots (webpki-roots), or `--cacert FILE`'s certificates, or
//! with `--insecure` no check of the server's certificate at all — and
//! the server name sent (SNI) and checked, the URL's host.
//!
//! Not wired into the run yet: the driver's connections are plain.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
        Trust::CaFile(path) => builder
            .with_root_certificates(ca_file(path)?)
            .with_no_client_auth(),
        Trust::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoCheck(provider)))
            .with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// `--cacert FILE`'s certificates: at least one, every one valid.
fn ca_file(path: &Path) -> Result<RootCertStore, String> {
    let bad = |e: &dyn std::fmt::Display| format!("--cacert {}: {e}", path.display());
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(&e))? {
        let cert = cert.map_err(|e| bad(&e))?;
        roots.add(cert).map_err(|e| bad(&e))?;
    }
    if roots.is_empty() {
        return Err(bad(
            &"no certificate in it (a PEM file of CERTIFICATE blocks)",
        ));
    }
    Ok(roots)
}

/// The name sent (SNI) and checked against the certificate: the URL's
/// host, without its port or an IPv6 address's brackets.
pub fn server_name(authority: &str) -> Result<ServerName<'static>, String> {
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    ServerName::try_from(host.to_string())
        .map_err(|e| format!("'{host}' is not a server name TLS can check: {e}"))
}

/// `--insecure`: every certificate passes; signatures are still checked
/// as the handshake needs them.
#[derive(Debug)]
struct NoCheck(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoCheck {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
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
