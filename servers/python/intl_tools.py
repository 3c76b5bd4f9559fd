"""intl_tools: benign text tools described in the languages of their users (serverInfo `intl-text`), a
precision check of the protocol suite (SERVERS.md §6.5): the descriptions carry the invisible characters
these scripts legitimately use. `--variant` picks the script family of the listing:

- `cjk`: Chinese and Japanese (a zero-width space between Japanese phrases, full-width punctuation);
- `rtl`: Arabic with right-to-left marks, Persian with zero-width non-joiners, Hebrew with isolates;
- `indic`: Hindi and Thai (a zero-width joiner in a conjunct, zero-width spaces between Thai words);
- `emoji`: emoji sequences (ZWJ, skin tones, a subdivision flag made of tag characters) and a German
  compound with soft hyphens.
"""

import sys
import unicodedata

from mcp_stdio import Tool, annotations, object_schema, serve

LISTINGS = {
    "cjk": [
        ("count_characters", "统计文本中的字符数（按 Unicode 字素计）。重要：空白字符不计入总数。", "要统计的文本。"),
        ("normalize_text", "テキストを NFKC 形式に正規化します。\u200b全角英数字は半角になります。", "正規化するテキスト。"),
    ],
    "rtl": [
        ("count_characters", "يعد الأحرف في النص \u200f(بما فيها المسافات)\u200f. مهم: يجب أن يكون النص بترميز UTF-8.", "النص المراد عده."),
        ("normalize_text", "متن را به شکل NFKC نرمال می\u200cکند و نیم\u200cفاصله\u200cها را نگه می\u200cدارد.", "متنی که نرمال می\u200cشود."),
        ("reverse_words", "הופך את סדר המילים בטקסט, למשל \u2067שלום עולם\u2069. חשוב: סימני פיסוק נשארים במקומם.", "הטקסט."),
    ],
    "indic": [
        ("count_characters", "पाठ में अक्षरों की गिनती करता है, जैसे क्\u200dष। महत्वपूर्ण: रिक्त स्थान नहीं गिने जाते।", "गिनने के लिए पाठ।"),
        ("normalize_text", "ปรับ\u200bข้อความ\u200bให้\u200bเป็น\u200bรูปแบบ NFKC", "ข้อความ"),
    ],
    "emoji": [
        ("count_characters", "Counts characters 👩\u200d💻 as one each, skin tones 👍🏽 too, flags like 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f as one.", "The text to count."),
        ("normalize_text", "Normalizes text to NFKC, e.g. Donau\u00addampf\u00adschiff\u00adfahrt stays one word.", "The text to normalize."),
    ],
}


def count(args: dict) -> dict:
    text = args["text"]
    return {"characters": sum(1 for ch in text if not unicodedata.category(ch).startswith(("M", "C")) and not ch.isspace())}


def normalize(args: dict) -> dict:
    return {"text": unicodedata.normalize("NFKC", args["text"])}


def reverse(args: dict) -> dict:
    return {"text": " ".join(reversed(args["text"].split()))}


HANDLERS = {"count_characters": count, "normalize_text": normalize, "reverse_words": reverse}


def tools(variant: str) -> list[Tool]:
    return [
        Tool(
            name=name,
            description=description,
            input_schema=object_schema({"text": {"type": "string", "description": text}}, ["text"]),
            annotations=annotations(True, False, False),
            handler=HANDLERS[name],
        )
        for name, description, text in LISTINGS[variant]
    ]


def variant_of(argv: list[str]) -> str:
    if "--variant" in argv:
        at = argv.index("--variant")
        if at + 1 < len(argv) and argv[at + 1] in LISTINGS:
            return argv[at + 1]
        sys.exit(f"intl_tools: --variant must be one of {', '.join(LISTINGS)}")
    return "cjk"


if __name__ == "__main__":
    serve("intl-text", tools(variant_of(sys.argv[1:])))
