//! How a URL given on the command line is shown: in every output (the
//! banner, progress lines, `config.json`, the reports, error messages) a
//! URL goes through [`display_url`], which drops the credentials it may
//! carry (`http://user:password@host`, `?api_key=...`). The one place this
//! is decided, beside [`crate::secret`], which redacts the header values.

use url::Url;

/// What replaces a credential.
const REDACTED: &str = "[redacted]";

/// Query parameters whose values are credentials: a name containing one of
/// these (case-insensitive): `api_key`, `access_token`, `x-goog-api-key`,
/// `sig`, `password`, ...
const SECRET_PARAMS: [&str; 6] = ["key", "token", "secret", "password", "sig", "auth"];

/// `text` as outputs show it: the user and password of a URL replaced by
/// `[redacted]` (a lone user may be a token), and the values of key-like
/// query parameters (`SECRET_PARAMS`) too. Text that does not parse as
/// a URL has any `scheme://userinfo@` part redacted all the same.
pub fn display_url(text: &str) -> String {
    let Ok(mut url) = Url::parse(text) else {
        return redact_userinfo(text);
    };
    if url.cannot_be_a_base() {
        return redact_userinfo(text);
    }
    let had_userinfo = !url.username().is_empty() || url.password().is_some();
    if had_userinfo {
        let _ = url.set_password(None);
        let _ = url.set_username(REDACTED);
    }
    if url.query().is_some() {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| {
                let v = if is_secret_param(&k) {
                    REDACTED.to_string()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    let mut shown = url
        .to_string()
        .replace("%5Bredacted%5D", REDACTED)
        .replace("%5bredacted%5d", REDACTED);
    // Keep the user's spelling for a URL without a path of its own.
    if !text.ends_with('/') && url.path() == "/" && url.query().is_none() && shown.ends_with('/') {
        shown.pop();
    }
    shown
}

/// The chat-completions path under a base URL.
pub const CHAT_PATH: &str = "/chat/completions";

/// The base of a URL that may be a chat-completions URL: the URL without
/// its `/chat/completions` path suffix (and without a `/v1` before it),
/// query kept; any other URL as it is.
pub fn chat_base(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) if !parsed.cannot_be_a_base() => {
            let path = parsed.path().trim_end_matches('/').to_string();
            let Some(dir) = path.strip_suffix(CHAT_PATH) else {
                return url.to_string();
            };
            let dir = dir.strip_suffix("/v1").unwrap_or(dir).to_string();
            parsed.set_path(&dir);
            parsed.to_string().trim_end_matches('/').to_string()
        }
        _ => url.to_string(),
    }
}

/// Whether `url`'s path ends in `/chat/completions`.
pub fn is_chat_url(url: &str) -> bool {
    Url::parse(url).map_or_else(
        |_| url.trim_end_matches('/').ends_with(CHAT_PATH),
        |u| u.path().trim_end_matches('/').ends_with(CHAT_PATH),
    )
}

/// `BASE` followed by `tail` (`/chat/completions`), the base's query
/// string kept after the joined path (`https://h/api/v1?key=k` gives
/// `https://h/api/v1/chat/completions?key=k`). Text that is not a URL is
/// joined as it is.
pub fn join(base: &str, tail: &str) -> String {
    match Url::parse(base) {
        Ok(mut url) if !url.cannot_be_a_base() => {
            let path = format!("{}{tail}", url.path().trim_end_matches('/'));
            url.set_path(&path);
            url.to_string()
        }
        _ => format!("{}{tail}", base.trim_end_matches('/')),
    }
}

/// `BASE/v1` (or `BASE` when it already ends in `/v1`) followed by `tail`,
/// the base's query string kept after the joined path
/// (`http://h/v1?api_key=k` gives `http://h/v1/chat/completions?api_key=k`).
/// A base that is itself a chat-completions URL (its path ends in
/// `/chat/completions`, for a gateway that serves it elsewhere than under
/// `/v1`, such as Helicone's `/router/NAME/chat/completions`) is that
/// endpoint, and its siblings sit beside it (`/models` gives
/// `/router/NAME/models`). Text that is not a URL is joined as it is.
pub fn under_v1(base: &str, tail: &str) -> String {
    let join = |path: &str| {
        let trimmed = path.trim_end_matches('/');
        if let Some(dir) = trimmed.strip_suffix(CHAT_PATH) {
            format!("{dir}{tail}")
        } else if trimmed.ends_with("/v1") {
            format!("{trimmed}{tail}")
        } else {
            format!("{trimmed}/v1{tail}")
        }
    };
    match Url::parse(base) {
        Ok(mut url) if !url.cannot_be_a_base() => {
            let path = join(url.path());
            url.set_path(&path);
            url.to_string()
        }
        _ => join(base),
    }
}

/// Whether a query parameter named `name` carries a credential.
fn is_secret_param(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_PARAMS.iter().any(|k| name.contains(k))
}

/// Text the URL parser refuses, redacted conservatively: everything from
/// `://` to the last `@` (a password may hold `/`, `?` or `#`, which is
/// why the parser refused it), and the values of key-like parameters
/// after the first `?`.
fn redact_userinfo(text: &str) -> String {
    let (head, query) = match text.split_once("://") {
        Some((scheme, rest)) => {
            let rest = match rest.rsplit_once('@') {
                Some((_, host)) => format!("{REDACTED}@{host}"),
                None => rest.to_string(),
            };
            let shown = format!("{scheme}://{rest}");
            match shown.split_once('?') {
                Some((h, q)) => (h.to_string(), Some(q.to_string())),
                None => (shown, None),
            }
        }
        None => match text.split_once('?') {
            Some((h, q)) => (h.to_string(), Some(q.to_string())),
            None => (text.to_string(), None),
        },
    };
    let Some(query) = query else {
        return head;
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) if is_secret_param(k) => format!("{k}={REDACTED}"),
            _ => pair.to_string(),
        })
        .collect();
    format!("{head}?{}", pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_the_parser_refuses_loses_its_credentials_all_the_same() {
        let shown = display_url("http://h:99999/v1?api_key=sk-XYZ&model=m");
        assert_eq!(shown, "http://h:99999/v1?api_key=[redacted]&model=m");
        let shown = display_url("https://u:p#ss/w?rd@h/v1");
        assert!(!shown.contains("ss/w") && !shown.contains("p#"), "{shown}");
        assert_eq!(shown, "https://[redacted]@h/v1");
        assert_eq!(display_url("not a url"), "not a url");
    }

    #[test]
    fn credentials_are_redacted_and_the_rest_kept() {
        assert_eq!(
            display_url("http://127.0.0.1:9001"),
            "http://127.0.0.1:9001"
        );
        assert_eq!(display_url("http://h:1/v1/"), "http://h:1/v1/");
        let shown = display_url("http://user:pa55@127.0.0.1:4000/v1?api_key=sk-XYZ&x=1");
        assert_eq!(
            shown,
            "http://[redacted]@127.0.0.1:4000/v1?api_key=[redacted]&x=1"
        );
        assert_eq!(
            display_url("https://bob:hunter2@api.example.com/v1?x=1"),
            "https://[redacted]@api.example.com/v1?x=1"
        );
        assert_eq!(display_url("https://token@h/"), "https://[redacted]@h/");
        assert_eq!(
            display_url("https://h/x?Access_Token=t0k&sig=s1g"),
            "https://h/x?Access_Token=[redacted]&sig=[redacted]"
        );
        assert_eq!(display_url("http://h:1/a@b"), "http://h:1/a@b");
        assert_eq!(display_url("not a url"), "not a url");
    }

    #[test]
    fn a_chat_completions_url_is_the_endpoint_and_its_siblings_sit_beside_it() {
        let base = "http://h:8080/router/cbsim/chat/completions";
        assert_eq!(under_v1(base, CHAT_PATH), base);
        assert_eq!(
            under_v1(base, "/models"),
            "http://h:8080/router/cbsim/models"
        );
        assert_eq!(
            under_v1("http://h/r/chat/completions?k=1", CHAT_PATH),
            "http://h/r/chat/completions?k=1"
        );
        assert_eq!(chat_base(base), "http://h:8080/router/cbsim");
        assert_eq!(
            chat_base("http://h/v1/chat/completions?k=1"),
            "http://h/?k=1"
        );
        assert_eq!(chat_base("http://h:1/base"), "http://h:1/base");
        assert!(is_chat_url(base) && !is_chat_url("http://h/router/cbsim"));
        // Not a chat-completions path: joined under /v1 as before.
        assert_eq!(
            under_v1("http://h/router/cbsim", CHAT_PATH),
            "http://h/router/cbsim/v1/chat/completions"
        );
    }

    #[test]
    fn a_path_is_joined_under_v1_before_the_query() {
        let chat = |b| under_v1(b, "/chat/completions");
        assert_eq!(chat("http://h:1"), "http://h:1/v1/chat/completions");
        assert_eq!(chat("http://h:1/v1/"), "http://h:1/v1/chat/completions");
        assert_eq!(
            chat("http://u:p@h:1/v1?api_key=k"),
            "http://u:p@h:1/v1/chat/completions?api_key=k"
        );
        assert_eq!(
            chat("http://h:1/base/?x=1"),
            "http://h:1/base/v1/chat/completions?x=1"
        );
    }

    #[test]
    fn a_tail_is_joined_before_the_query() {
        assert_eq!(
            join("https://h/api/v1?key=k", "/chat/completions"),
            "https://h/api/v1/chat/completions?key=k"
        );
        assert_eq!(
            join("https://h/api/v1/", "/models"),
            "https://h/api/v1/models"
        );
        assert_eq!(join("not a url/", "/x"), "not a url/x");
    }

    #[test]
    fn text_the_parser_refuses_is_redacted_too() {
        let shown = display_url("http://user:pa55@host:99999/v1");
        assert!(!shown.contains("pa55"), "{shown}");
        assert_eq!(shown, "http://[redacted]@host:99999/v1");
    }
}
