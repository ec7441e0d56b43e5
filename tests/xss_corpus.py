"""Hostile text for the XSS tests: each string must reach the page as the same text, run nothing
and leave the highlight spans on their exact offsets. Every payload that could run calls alert()
or pushes to window.__xss, which the browser tests watch (watched_page, assert_nothing_ran)."""

PAYLOADS = [
    "<script>alert('script')</script>",
    "<img src=x onerror=alert('img')>",
    "<svg onload=alert('svg')><circle r=1></circle></svg>",
    "<svg><script>alert('svg-script')</script></svg>",
    "<a href=\"javascript:alert('href')\">click</a>",
    "javascript:alert('bare-url')",
    "<iframe src=\"javascript:alert('iframe')\"></iframe>",
    "<body onload=alert('body')>",
    "\"><script>alert('attr-break')</script>",
    "' onmouseover='alert(\"single-quote\")' x='",
    "<scr<script>ipt>alert('nested')</scr</script>ipt>",
    "<img src=x onerror=alert('unclosed'",
    "</p></span></article><script>window.__xss.push('close-tags')</script>",
    "&lt;script&gt;alert('entity')&lt;/script&gt; &amp; &#60;b&#62; &quot;",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert('mxss')>",
    "<details open ontoggle=alert('details')>",
    "{{ 7*7 }} {% csrf_token %} ${7*7}",
    "\u202eevil\u202c \u2066rtl\u2069 \u200f\u200e mixed \u05e9\u05dc\u05d5\u05dd",
    "<!-- comment --> <![CDATA[ x ]]> <?php echo 1 ?>",
    "<style>body{display:none}</style><link rel=import href=x>",
    "hx-get=\"/admin/\" hx-trigger=load <div hx-get=\"/queue/\" hx-trigger=\"load\">htmx</div>",
]

PASSWORD = "pw-ada-123"  # tests.factories.user's

# Installed before any page script: every way a payload could signal that it ran.
WATCH = """
window.__xss = [];
window.__csp = [];
for (const name of ["alert", "confirm", "prompt"]) window[name] = (m) => window.__xss.push(name +
    ":" + m);
document.addEventListener("securitypolicyviolation",
    (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`));
"""

# Markup that our templates never emit, so finding any of it means hostile text became markup.
DANGEROUS_DOM = """() => {
  const found = [];
  for (const el of document.querySelectorAll("*")) {
    for (const attr of el.getAttributeNames()) {
      if (attr.startsWith("on")) found.push(`${el.tagName} ${attr}`);
      const value = el.getAttribute(attr) || "";
      if (/^\\s*javascript:/i.test(value)) found.push(`${el.tagName} ${attr}=${value}`);
    }
  }
  for (const el of
      document.querySelectorAll(
        "script:not([src]), iframe, math, object, embed, img, body style, link[rel=import]")) {
    found.push(el.outerHTML.slice(0, 80));
  }
  // Inside the containers of untrusted text, no element but our own highlight spans and markup.
  const text = ".untrusted, [hx-disable], td.question, .error, .messages";
  for (const el of document.querySelectorAll(`:is(${text}) *`)) {
    if (!["SPAN", "B", "LI", "P", "HEADER", "DIV", "A", "OL", "MARK"].includes(el.tagName)
        || el.getAttributeNames().some((a) => a.startsWith("hx-") || a === "style" || a === "src"))
            {
      found.push(el.outerHTML.slice(0, 80));
    }
  }
  return found;
}"""


def watched_page(browser, base_url: str):
    """A page of `browser` that records every way a payload could signal it ran (a generator: the
    browser tests' `page` fixtures yield from it)."""
    context = browser.new_context(base_url=base_url, viewport={"width": 1400, "height": 900})
    context.set_default_timeout(5000)
    context.add_init_script(WATCH)
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.console_errors = []
    page.on(
        "console", lambda msg: page.console_errors.append(msg.text) if msg.type == "error" else None
    )
    yield page
    context.close()


def assert_nothing_ran(page, where: str) -> None:
    assert page.evaluate("window.__xss") == [], where
    assert page.dialogs == [], where
    assert (
        page.evaluate("window.__csp") == []
    ), f"{where}: markup reached the page and only CSP stopped it"
    assert page.evaluate(DANGEROUS_DOM) == [], where
    assert not [e for e in page.console_errors if "Content Security Policy" in e], where


def sign_in(page) -> None:
    """Sign in as ada (tests.factories.user's password)."""
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.press("input[name=password]", "Enter")
