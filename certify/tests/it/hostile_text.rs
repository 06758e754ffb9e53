//! Text from the contract and the endpoint is untrusted. With a hostile string
//! (`</script>`, `<img onerror>`, quotes, control characters) in every field,
//! nothing unescaped reaches the HTML page, and the page fetches nothing.

use crate::common;

use crate::common::HOSTILE;
use lostreply_certify::write::Format;

fn html() -> String {
    common::render(Format::Html, &common::hostile())
}

#[test]
fn html_escapes_everything() {
    let html = html();
    assert!(!html.contains("<img"), "raw <img in the page");
    assert!(!html.contains("<b "), "raw <b in the page");
    assert!(
        !html.contains("onerror=alert(1)>"),
        "an unescaped attribute-ending >"
    );
    assert!(
        !html.contains("onmouseover=\""),
        "a quote from the data reached an attribute"
    );
    // Exactly our own script element, opened and closed once.
    assert_eq!(html.matches("<script").count(), 1);
    assert_eq!(html.matches("</script>").count(), 1);
    // Control characters (other than newline and tab) never reach the page.
    assert!(
        !html
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "a control character reached the page"
    );
    // The hostile text is there, as text, wherever it was put.
    let escaped = "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;&lt;b onmouseover=&quot;alert(2)&quot;&gt;\u{fffd}[31mred\u{fffd}\u{fffd}";
    let c = common::hostile();
    for needle in [
        format!("name{escaped}"),
        format!("source{escaped}"),
        format!("http://127.0.0.1:7411/{escaped}"),
        format!("lostreply certify --contract {escaped}"),
    ] {
        assert!(html.contains(&needle), "{needle} is not in the page");
    }
    // Names, summaries and every evidence field of the failed probes; names in
    // attributes too.
    for p in &c.probes {
        let name = p.name.strip_suffix(HOSTILE).unwrap();
        assert!(html.contains(&format!("data-probe=\"{name}{escaped}\"")));
        let summary = p.summary.strip_suffix(HOSTILE).unwrap();
        assert!(html.contains(&format!("{summary}{escaped}")));
    }
    for needle in [
        "duplicate 1",
        "POST /v1/charges",
        "lrk_race_5",
        "201 in 31 ms",
        "lrm_race_5",
        "ground_truth",
        "answers: 201 x2, 409 x2",
    ] {
        assert!(
            html.contains(&format!("{needle}{escaped}")),
            "{needle} with the hostile text, escaped, is not in the page"
        );
    }
}

#[test]
fn html_fetches_nothing() {
    let html = html();
    for needle in [
        "src=\"",
        "href=\"http",
        "@import",
        "url(",
        "<link",
        "<iframe",
    ] {
        assert!(!html.contains(needle), "found {needle}");
    }
    // Every link stays on the page.
    for (i, _) in html.match_indices("href=\"") {
        assert!(html[i + 6..].starts_with("#probe-"), "{}", &html[i..i + 40]);
    }
    assert!(html
        .contains("content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-"));
}
