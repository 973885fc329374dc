"""`maskcost straddle`: the tokens of a vocabulary that straddle a JSON string boundary."""
from __future__ import annotations

import sys
from pathlib import Path

from ..calibrate.tokenizer import BUNDLED

def cmd_straddle(args) -> int:
    import json

    from ..calibrate.straddle import report
    from ..calibrate.tokenizer import load_vocab
    doc = report([load_vocab(v) for v in args.vocab], [Path(f) for f in args.files], args.as_written)
    for v in doc["vocabularies"]:
        print(f"{v['vocab']:>10}: {v['straddle_set']} straddling tokens of {v['vocab_size']}")
    for f in doc["files"]:
        rate = "-" if f["rate"] is None else f"{100 * f['rate']:.1f}%"
        print(f"{f['file']} ({f['vocab']}): {f['outputs']} outputs, {f['tokens']} tokens, {f['straddling']} "
              f"straddling ({rate})")
    if args.files:
        print(f"(a JSON document tokenized {doc['documents']}; a raw file's texts as the server wrote them)")
    if args.json:
        Path(args.json).write_text(json.dumps({"command": " ".join(["maskcost", *sys.argv[1:]]), **doc}, indent=1))
        print(f"wrote {args.json}")
    return 0


def add_parser(sub) -> None:
    st = sub.add_parser("straddle", help="the tokens of a vocabulary that straddle a JSON string boundary (a "
                                         "quote plus other bytes), and their rate in output files")
    st.add_argument("--vocab", "--tokenizer", nargs="+", default=["llama3"], metavar="NAME",
                    help=f"bundled vocabularies ({', '.join(BUNDLED)}) or Hugging Face tokenizer folders "
                         f"(default: llama3)")
    st.add_argument("--json", metavar="OUT.json", help="write the counts as JSON")
    st.add_argument("--as-written", action="store_true", help="tokenize a JSON document's text as the file holds "
                    "it (default: re-serialized as the server writes JSON, ', ' and ': ' separators)")
    st.add_argument("files", nargs="*", metavar="FILE", help="a JSON document or a sweep's raw file (each "
                    "record's text, as the server wrote it)")
    st.set_defaults(func=cmd_straddle)
