//! The TLS flags `load http` (for `https://` URLs) and `load resp`
//! (`--tls`) share, and the endpoint they make.

use super::usage_error_in;
use clap::error::ErrorKind;
use serverlab_load::endpoint::TlsEndpoint;
use serverlab_load::tls::{client_config, server_name, Trust, INSECURE};
use serverlab_load::Endpoint;
use std::path::PathBuf;

/// How the server's certificate is checked.
#[derive(clap::Args)]
pub struct TrustArgs {
    /// TLS: check the server's certificate against the certificates of this PEM file instead of
    /// Mozilla's roots
    #[arg(long, value_name = "FILE")]
    cacert: Option<PathBuf>,
    /// TLS: do not check the server's certificate at all (said loudly in the output)
    #[arg(long, conflicts_with = "cacert")]
    insecure: bool,
}

impl TrustArgs {
    /// The flag given, if any (refused where there is no TLS).
    pub fn given(&self) -> Option<&'static str> {
        match (self.insecure, &self.cacert) {
            (true, _) => Some("--insecure"),
            (false, Some(_)) => Some("--cacert"),
            (false, None) => None,
        }
    }

    /// `under`, spoken to under TLS as `host` (the name sent and checked),
    /// the certificate checked as these flags say; a bad `--cacert` or
    /// name is a usage error of `load <protocol>`.
    pub fn endpoint(&self, under: Endpoint, host: &str, protocol: &str) -> Endpoint {
        let trust = match (&self.cacert, self.insecure) {
            (_, true) => Trust::Insecure,
            (Some(path), false) => Trust::CaFile(path.clone()),
            (None, false) => Trust::Roots,
        };
        let config = client_config(&trust)
            .unwrap_or_else(|e| usage_error_in(protocol, ErrorKind::InvalidValue, e));
        let name = server_name(host)
            .unwrap_or_else(|e| usage_error_in(protocol, ErrorKind::InvalidValue, e));
        if self.insecure {
            eprintln!("serverlab: {INSECURE}");
        }
        Endpoint::Tls(Box::new(TlsEndpoint {
            under,
            name,
            config,
            insecure: self.insecure,
        }))
    }
}
