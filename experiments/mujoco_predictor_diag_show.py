"""Prints mujoco_predictor_diag.py's JSON as tables: python experiments/mujoco_predictor_diag_show.py OUT.json"""

import json
import sys

d = json.load(open(sys.argv[1]))
pols = list(d["policies"])
print("policy true returns / falls (stochastic play, %d eps)" % d["episodes"])
for p in pols:
    q = d["policies"][p]
    true = sum(q["true_returns"]) / len(q["true_returns"])
    print(f"  {p:24s} true {true:8.0f}  falls {q['falls']}  std {q['std']}")
preds = list(d["predictors"])
print("predicted return per episode (normalized reward, sd 0.05/step) -- rows policy, cols predictor")
print(" " * 24 + "".join(f"{p:>18s}" for p in preds))
for p in pols:
    print(f"{p:24s}" + "".join(f"{d['predictors'][q]['per_policy'][p]['pred_return']:18.1f}" for q in preds))
for q in preds:
    r = d["predictors"][q]
    print(
        q,
        {
            k: r[k]
            for k in (
                "step_corr_all",
                "clip_corr_all",
                "clip_rank_corr_all",
                "clip_corr_trained",
                "clip_pair_acc_all",
                "clip_pair_acc_trained",
            )
        },
        "implied fall penalty all %.0f trained %.0f"
        % (r["fit_all"]["implied_fall_penalty"], r["fit_trained"]["implied_fall_penalty"]),
    )
    print("   own-step corr", {p: r["per_policy"][p]["step_corr_own"] for p in pols})
    af = r.get("around_falls")
    if af:
        z = af["z_by_offset"]
        print(
            "   around falls n=%d: z at offsets" % af["n_falls"],
            {k: z[k] for k in z if int(k) in (-30, -20, -15, -10, -8, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 5, 10)},
            "sum -30..-1 %.1f, +1..+10 %.1f" % (af["sum_z_-30..-1"], af["sum_z_+1..+10"]),
        )
    db = r.get("prefdb")
    if db:
        for s in ("train", "val"):
            print("   db", s, db[s])
        print("   db train early/late half acc", db["train_early_half_acc"], db["train_late_half_acc"])
    else:
        print("   ", r.get("prefdb_error"))
for q in preds:
    r = d["predictors"][q]
    for g in ("trained", "random"):
        af = r.get("around_falls_" + g)
        if af and "z_by_offset" in af:
            z = af["z_by_offset"]
            print(
                q,
                g,
                "falls n=%d ordinary steps %d: z" % (af["n_falls"], af["ordinary_steps"]),
                {k: z[k] for k in z if int(k) in (-30, -20, -10, -5, -3, -2, -1, 0, 1, 2, 3, 5, 10)},
                "sum-30..-1 %.1f +1..+10 %.1f; dip area (oracle units) -30..+10 %s, -10..0 %s"
                % (
                    af["sum_z_-30..-1"],
                    af["sum_z_+1..+10"],
                    af["dip_area_oracle_units_-30..+10"],
                    af["dip_area_oracle_units_-10..0"],
                ),
            )
        elif af:
            print(q, g, af)
