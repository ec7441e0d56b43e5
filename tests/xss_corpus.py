"""Hostile text for the XSS tests: each string must reach the page as the same text, run nothing
and leave the highlight spans on their exact offsets. Every payload that could run calls alert()
or pushes to window.__xss, which the browser test watches."""

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
