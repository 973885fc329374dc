"""Post hoc, after Z (not predictions): does the embedded default (h200-vllm-0.25.1-default-z) still give the
direction every held-out change was measured to have? Each change predicted with the default at the profile
host's speed (1.0) and at 0.8, on the validation's workload (tier/flat + tier/bounded, 122-token prompts, 112
cached, max-num-seqs 256, 14 cores, cpu_count 16, async), against the direction the latest session that
measured it found (README, "How good is it"): max-num-seqs 128 slower at 160 and 256 (R: +84%, +68%); 4 cores
slower where the pool runs, 160 and 256 (S), no change at 64 and 128 (S: -1.2%, -3.0%, inside the servers'
spread); ngram 3 (async off, no drafts with random weights) no change at 64 (S: -0.0%), slower at 256 (S:
+257%); unique schemas at 8 the same ITL, a longer TTFT (S); guidance faster than xgrammar at 8-256 (P-Z).
A predicted change under 5% in size is "no change" (S's rule).
usage (from the repository root): python3 validation/h200-vllm-0.25.1/z/directions_check.py > validation/h200-vllm-0.25.1/z/directions-check.md"""
from dataclasses import replace

from maskcost.calibrate.profile import load_default_profile
from maskcost.model.config import EngineConfig, Workload
from maskcost.model.predict import run_point

NO_CHANGE_PCT = 5.0
BASE = EngineConfig(max_num_seqs=256, usable_cores=14, cpu_count=16)
CHECKS = (  # (change, concurrencies, the changed config, workload changes, metric, measured direction)
    ("max-num-seqs 128", (160, 256), {"max_num_seqs": 128}, {}, "itl_ms_mean", "slower"),
    ("4 cores", (160, 256), {"usable_cores": 4}, {}, "itl_ms_mean", "slower"),
    ("4 cores", (64, 128), {"usable_cores": 4}, {}, "itl_ms_mean", "no change"),
    ("ngram 3", (64,), {"spec_tokens": 3, "spec_method": "ngram", "spec_draft_rate": 0.0, "async_scheduling": False},
     {}, "itl_ms_mean", "no change"),
    ("ngram 3", (256,), {"spec_tokens": 3, "spec_method": "ngram", "spec_draft_rate": 0.0, "async_scheduling": False},
     {}, "itl_ms_mean", "slower"),
    ("unique schemas, ITL", (8,), {}, {"unique_schemas": True}, "itl_ms_mean", "no change"),
    ("unique schemas, TTFT", (8,), {}, {"unique_schemas": True}, "ttft_ms_p50", "slower"),
    ("guidance", (8, 32, 64, 128, 160, 192, 224, 256), {"backend": "guidance"}, {}, "itl_ms_mean", "faster"),
)


def direction(pct: float) -> str:
    return "no change" if abs(pct) < NO_CHANGE_PCT else "slower" if pct > 0 else "faster"


def main() -> None:
    p = load_default_profile()
    print(f"Profile {p.name}; a change under {NO_CHANGE_PCT:.0f}% is no change.\n")
    print("| change | conc | speed | base | changed | change % | predicted | measured | |")
    print("|---|---|---|---|---|---|---|---|---|")
    right = total = 0
    for name, concs, ecfg, wchg, metric, want in CHECKS:
        for c in concs:
            for speed in (1.0, 0.8):
                wl = Workload(concurrency=c, requests=max(200, 4 * c), schemas=("tier/flat", "tier/bounded"),
                              prompt_tokens=122, prompt_cached_tokens=112)
                base = run_point(p, replace(BASE, cpu_speed=speed), wl)[metric]
                changed = run_point(p, replace(BASE, cpu_speed=speed, **ecfg), replace(wl, **wchg))[metric]
                pct = 100.0 * (changed / base - 1.0)
                got = direction(pct)
                ok = got == want
                right += ok
                total += 1
                print(f"| {name} | {c} | {speed:.1f} | {base:.1f} | {changed:.1f} | {pct:+.1f} | {got} | {want} | "
                      f"{'right' if ok else 'WRONG'} |")
    print(f"\n{right} of {total} right")


if __name__ == "__main__":
    main()
