//! What a storage failure says to a person: in words, not as the client or the server wrote it.

use opendal::ErrorKind;

/// What a storage failure says: a server out of reach in those words, not the client's ("send http request
/// (Unexpected)", found in use); a server that refused the credentials says so (found in use: WebDAV's 401 page came
/// through as raw HTML); anything else as one line of text with its kind.
pub(crate) fn said(source: &opendal::Error) -> String {
    let message = source.message();
    if source.kind() == ErrorKind::Unexpected && message.contains("send http request") {
        return "the server could not be reached (check the address, and that this computer is online)".to_owned();
    }
    let text = plain_text(message);
    if refused(source) {
        return format!(
            "the server refused quire's credentials ({text}): check the user and password of a WebDAV target (in \
             Settings or QUIRE_WEBDAV_PASSWORD), or the keys of an S3 one"
        );
    }
    format!("{text} ({})", source.kind())
}

/// Whether a server refused quire's credentials: its status as a word of its own (not digits inside a request id), or
/// S3's codes. A folder target's permission error is not one. Not being offline: the changes would wait for ever.
pub(crate) fn refused(source: &opendal::Error) -> bool {
    const REFUSALS: [&str; 6] = [
        "401",
        "403",
        "Unauthorized",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "AccessDenied",
    ];
    source
        .message()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| REFUSALS.contains(&word))
}

/// A server's message as one line of text: an HTML page's title (or its text), whitespace folded, at most 200
/// characters.
fn plain_text(message: &str) -> String {
    let inner = |open: &str, close: &str| {
        let start = message.find(open)? + open.len();
        let end = message[start..].find(close)? + start;
        Some(&message[start..end])
    };
    let text = match inner("<title>", "</title>") {
        Some(title) => title.to_owned(),
        None if message.contains('<') => {
            let mut out = String::new();
            let mut in_tag = false;
            for c in message.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => {
                        in_tag = false;
                        out.push(' ');
                    }
                    c if !in_tag => out.push(c),
                    _ => {}
                }
            }
            out
        }
        None => message.to_owned(),
    };
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match folded.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &folded[..at]),
        None => folded,
    }
}

#[cfg(test)]
mod tests {
    use super::said;

    #[test]
    fn a_refusal_is_said_in_words_and_an_html_page_as_its_title() {
        let page = "<html> <head><title>401 Access not authorized</title></head> <body> <h1>401 Access not \
                    authorized</h1> </body> </html>";
        let refusal = said(&opendal::Error::new(opendal::ErrorKind::Unexpected, page));
        assert!(
            refusal.starts_with("the server refused quire's credentials (401 Access not authorized): check"),
            "{refusal}"
        );
        assert!(!refusal.contains('<'), "{refusal}");
        let other = said(&opendal::Error::new(
            opendal::ErrorKind::Unexpected,
            "<p>Server\n  busy</p>",
        ));
        assert_eq!(other, "Server busy (Unexpected)");
        let long = said(&opendal::Error::new(opendal::ErrorKind::NotFound, "x".repeat(500)));
        assert!(long.chars().count() < 230, "{long}");
    }

    #[test]
    fn digits_inside_an_id_and_a_folder_permission_are_not_a_refusal() {
        let id = said(&opendal::Error::new(
            opendal::ErrorKind::Unexpected,
            "slow down (request A4011F)",
        ));
        assert!(!id.contains("refused"), "{id}");
        let folder = said(&opendal::Error::new(
            opendal::ErrorKind::PermissionDenied,
            "Permission denied (os error 13)",
        ));
        assert!(!folder.contains("refused"), "{folder}");
        let s3 = said(&opendal::Error::new(
            opendal::ErrorKind::PermissionDenied,
            "<Code>InvalidAccessKeyId</Code>",
        ));
        assert!(s3.contains("refused"), "{s3}");
    }
}
