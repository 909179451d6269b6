//! Why a server stops reading a request, and the status that says so.

use super::{Status, TargetError};

/// A request the server will not read to its end: it answers
/// [`RequestError::status`], with the error's text as the body, and closes
/// the connection (it cannot know where the next request would start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("too many empty lines before the request")]
    LeadingEmptyLines,
    #[error("malformed request line")]
    MalformedLine,
    #[error("the request line is too long")]
    LineTooLong,
    #[error("the request target is too long")]
    TargetTooLong,
    #[error("the header section is too large")]
    HeadersTooLarge,
    #[error("too many header fields")]
    TooManyHeaders,
    #[error("not an HTTP/1.0 or HTTP/1.1 request")]
    Version,
    /// httparse refused the head.
    #[error("malformed request head ({0})")]
    Syntax(httparse::Error),
    /// The head ended, but httparse found no complete request in it.
    #[error("malformed request head")]
    MalformedHead,
    #[error("malformed request target: {0}")]
    Target(TargetError),
    #[error("an HTTP/1.1 request needs exactly one Host")]
    Host,
    #[error("Content-Length is not a number")]
    LengthNotANumber,
    #[error("conflicting Content-Length fields")]
    LengthConflict,
    #[error("Transfer-Encoding (chunked) is not supported: send Content-Length")]
    TransferEncoding,
    #[error("a PUT or POST needs Content-Length")]
    LengthRequired,
    #[error("the body is larger than --max-value")]
    BodyTooLarge,
    #[error("only the 100-continue expectation is supported")]
    Expectation,
    /// The connection's input reached its limit without a whole request
    /// (not reached while the limits above hold).
    #[error("request too large")]
    TooLarge,
    #[error("no complete request within --header-timeout")]
    Timeout,
}

impl RequestError {
    /// The status that answers this error.
    pub fn status(self) -> Status {
        use RequestError as E;
        match self {
            E::LeadingEmptyLines
            | E::MalformedLine
            | E::Version
            | E::Syntax(_)
            | E::MalformedHead
            | E::Target(_)
            | E::Host
            | E::LengthNotANumber
            | E::LengthConflict
            | E::TooLarge => Status::BadRequest,
            E::LineTooLong | E::TargetTooLong => Status::UriTooLong,
            E::HeadersTooLarge | E::TooManyHeaders => Status::HeadersTooLarge,
            E::TransferEncoding | E::LengthRequired => Status::LengthRequired,
            E::BodyTooLarge => Status::ContentTooLarge,
            E::Expectation => Status::ExpectationFailed,
            E::Timeout => Status::RequestTimeout,
        }
    }

    /// The error httparse reported, as ours.
    pub(crate) fn from_httparse(e: httparse::Error) -> RequestError {
        match e {
            httparse::Error::TooManyHeaders => RequestError::TooManyHeaders,
            httparse::Error::Version => RequestError::Version,
            other => RequestError::Syntax(other),
        }
    }
}

/// A request the server will not read to its end: answer `error.status()`,
/// then close the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reject {
    pub error: RequestError,
    /// The request was a HEAD: the response has no body.
    pub head_only: bool,
}

impl Reject {
    pub fn new(error: RequestError) -> Reject {
        Reject {
            error,
            head_only: false,
        }
    }

    pub fn status(&self) -> Status {
        self.error.status()
    }
}

impl From<RequestError> for Reject {
    fn from(error: RequestError) -> Reject {
        Reject::new(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert_eq!(RequestError::LineTooLong.status(), Status::UriTooLong);
        assert_eq!(
            RequestError::from_httparse(httparse::Error::TooManyHeaders).status(),
            Status::HeadersTooLarge
        );
        assert_eq!(
            RequestError::from_httparse(httparse::Error::Token).to_string(),
            "malformed request head (invalid token)"
        );
        assert_eq!(RequestError::Timeout.status(), Status::RequestTimeout);
    }
}
