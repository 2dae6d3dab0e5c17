//! Statistics for benchmark results: pure functions, checked against published values.
//!
//! - Wilson score interval (Wilson 1927; Newcombe 1998, method 3) for a resolved rate.
//! - Exact McNemar test: a two-sided binomial test on the discordant pairs of two paired runs.
//! - pass@k (Chen et al. 2021) and pass^k (Yao et al. 2024), unbiased estimators from n attempts.

use serde::Serialize;

/// The normal quantile for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A proportion with its 95% Wilson score interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Proportion {
    pub successes: u64,
    pub trials: u64,
    /// successes / trials (0 when there are no trials).
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

/// The Wilson score interval for `successes` out of `trials` at normal quantile `z`.
/// With no trials nothing is known: the interval is the whole of [0, 1].
/// The median (the mean of the middle two for an even count); `None` when empty.
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

pub fn wilson(successes: u64, trials: u64, z: f64) -> Proportion {
    if trials == 0 {
        return Proportion {
            successes,
            trials,
            rate: 0.0,
            low: 0.0,
            high: 1.0,
        };
    }
    let s = successes.min(trials);
    let n = trials as f64;
    let p = s as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Proportion {
        successes: s,
        trials,
        rate: p,
        low: (center - half).max(0.0),
        high: (center + half).min(1.0),
    }
}

/// The 95% Wilson interval.
pub fn wilson95(successes: u64, trials: u64) -> Proportion {
    wilson(successes, trials, Z95)
}

/// The exact McNemar test on two paired binary outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct McNemar {
    /// Pairs where A succeeded and B failed.
    pub a_only: u64,
    /// Pairs where B succeeded and A failed.
    pub b_only: u64,
    /// Pairs where both agree (they do not enter the test).
    pub concordant: u64,
    /// Two-sided exact p-value: P(X <= min(b, c)) * 2 under Binomial(b + c, 1/2), capped at 1.
    pub p_value: f64,
}

/// Exact (conditional) McNemar test from paired outcomes `(a_success, b_success)`.
pub fn mcnemar_pairs(pairs: impl IntoIterator<Item = (bool, bool)>) -> McNemar {
    let (mut a_only, mut b_only, mut concordant) = (0u64, 0u64, 0u64);
    for (a, b) in pairs {
        match (a, b) {
            (true, false) => a_only += 1,
            (false, true) => b_only += 1,
            _ => concordant += 1,
        }
    }
    mcnemar(a_only, b_only, concordant)
}

/// Exact McNemar test from the discordant counts.
pub fn mcnemar(a_only: u64, b_only: u64, concordant: u64) -> McNemar {
    let n = a_only + b_only;
    let k = a_only.min(b_only);
    let p_value = if n == 0 {
        1.0
    } else {
        (2.0 * binom_cdf_half(k, n)).min(1.0)
    };
    McNemar {
        a_only,
        b_only,
        concordant,
        p_value,
    }
}

/// P(X <= k) for X ~ Binomial(n, 1/2), summed in log space so large n does not overflow.
fn binom_cdf_half(k: u64, n: u64) -> f64 {
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut total = 0.0;
    for i in 0..=k.min(n) {
        total += (ln_choose(n, i) + ln_half_n).exp();
    }
    total.min(1.0)
}

/// ln C(n, k), exact summation of logs (n here is a count of tasks: small).
fn ln_choose(n: u64, k: u64) -> f64 {
    let k = k.min(n - k.min(n));
    (0..k)
        .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
        .sum()
}

/// Unbiased pass@k for one task: the probability that at least one of k attempts drawn
/// without replacement from `n` attempts (of which `c` succeeded) succeeds: 1 - C(n-c,k)/C(n,k).
/// `None` when k is 0 or exceeds n.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if k == 0 || k > n {
        return None;
    }
    let c = c.min(n);
    if n - c < k {
        return Some(1.0);
    }
    // Product form (Chen et al.) avoids huge binomials: C(n-c,k)/C(n,k) = prod_{i=n-c+1..=n} (1 - k/i).
    let mut fail = 1.0;
    for i in (n - c + 1)..=n {
        fail *= 1.0 - k as f64 / i as f64;
    }
    Some(1.0 - fail)
}

/// Unbiased pass^k for one task: the probability that all k attempts drawn without replacement
/// succeed: C(c,k)/C(n,k). `None` when k is 0 or exceeds n.
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if k == 0 || k > n {
        return None;
    }
    let c = c.min(n);
    if c < k {
        return Some(0.0);
    }
    // C(c,k)/C(n,k) = prod_{i=0..k} (c-i)/(n-i)
    let mut all = 1.0;
    for i in 0..k {
        all *= (c - i) as f64 / (n - i) as f64;
    }
    Some(all)
}

/// Mean of a per-task estimator over tasks given as `(attempts, successes)`; `None` when
/// there are no tasks or any task has fewer than k attempts.
pub fn mean_over_tasks(
    tasks: &[(u64, u64)],
    k: u64,
    estimator: fn(u64, u64, u64) -> Option<f64>,
) -> Option<f64> {
    if tasks.is_empty() {
        return None;
    }
    let mut sum = 0.0;
    for &(n, c) in tasks {
        sum += estimator(n, c, k)?;
    }
    Some(sum / tasks.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I,
    /// method 3 (Wilson score without continuity correction), to 4 decimals.
    #[test]
    fn wilson_matches_newcombe_1998() {
        let cases = [
            (81, 263, 0.2553, 0.3662),
            (15, 148, 0.0624, 0.1605),
            (0, 20, 0.0000, 0.1611),
            (1, 29, 0.0061, 0.1718),
        ];
        for (x, n, lo, hi) in cases {
            let p = wilson95(x, n);
            assert!(close(p.low, lo, 5e-5), "{x}/{n}: low {} vs {lo}", p.low);
            assert!(close(p.high, hi, 5e-5), "{x}/{n}: high {} vs {hi}", p.high);
        }
    }

    #[test]
    fn wilson_edges() {
        let all = wilson95(20, 20);
        assert!(close(all.high, 1.0, 1e-12));
        assert!(close(all.low, 1.0 - 0.1611, 5e-5), "{}", all.low);
        let none = wilson95(0, 0);
        assert_eq!((none.low, none.high), (0.0, 1.0));
        let half = wilson95(18, 36);
        assert!(close(half.rate, 0.5, 1e-12));
        // symmetric around 1/2
        assert!(close(half.low + half.high, 1.0, 1e-12));
    }

    /// Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91: discordant pairs 1 and 7
    /// give an exact conditional McNemar p of 0.070.
    #[test]
    fn mcnemar_matches_fagerland_2013() {
        let t = mcnemar(1, 7, 51);
        assert!(close(t.p_value, 0.0703, 5e-5), "{}", t.p_value);
        assert!(close(t.p_value, 18.0 / 256.0, 1e-12));
        // symmetric in the two runs
        assert_eq!(mcnemar(7, 1, 51).p_value, t.p_value);
    }

    #[test]
    fn mcnemar_counts_pairs_and_edge_cases() {
        let t = mcnemar_pairs([
            (true, true),
            (true, false),
            (false, true),
            (false, true),
            (false, false),
        ]);
        assert_eq!((t.a_only, t.b_only, t.concordant), (1, 2, 2));
        // n=3, k=1: 2 * (1+3)/8 = 1.0
        assert!(close(t.p_value, 1.0, 1e-12));
        assert_eq!(mcnemar(0, 0, 10).p_value, 1.0);
        // 0 vs 10: 2 / 1024
        assert!(close(mcnemar(0, 10, 0).p_value, 2.0 / 1024.0, 1e-15));
        // large n does not overflow: 0 vs 200 is vanishingly unlikely
        let big = mcnemar(0, 200, 0);
        assert!(big.p_value > 0.0 && big.p_value < 1e-50, "{}", big.p_value);
        let even = mcnemar(100, 100, 0);
        assert!(close(even.p_value, 1.0, 1e-12));
    }

    #[test]
    fn pass_at_k_known_values() {
        // Chen et al. (2021): pass@1 is the plain success fraction.
        assert!(close(pass_at_k(10, 3, 1).unwrap(), 0.3, 1e-12));
        // n=4, c=2, k=2: 1 - C(2,2)/C(4,2) = 5/6
        assert!(close(pass_at_k(4, 2, 2).unwrap(), 5.0 / 6.0, 1e-12));
        // n=200, c=0 → 0; c = n → 1; n - c < k → 1
        assert_eq!(pass_at_k(200, 0, 100), Some(0.0));
        assert_eq!(pass_at_k(5, 5, 3), Some(1.0));
        assert_eq!(pass_at_k(5, 3, 3), Some(1.0));
        // n=5, c=1, k=2: 1 - C(4,2)/C(5,2) = 1 - 6/10
        assert!(close(pass_at_k(5, 1, 2).unwrap(), 0.4, 1e-12));
        assert_eq!(pass_at_k(3, 1, 4), None);
        assert_eq!(pass_at_k(3, 1, 0), None);
    }

    #[test]
    fn pass_hat_k_known_values() {
        // n=4, c=2, k=2: C(2,2)/C(4,2) = 1/6
        assert!(close(pass_hat_k(4, 2, 2).unwrap(), 1.0 / 6.0, 1e-12));
        // pass^1 == pass@1
        assert!(close(pass_hat_k(10, 3, 1).unwrap(), 0.3, 1e-12));
        // n=8, c=6, k=3: C(6,3)/C(8,3) = 20/56
        assert!(close(pass_hat_k(8, 6, 3).unwrap(), 20.0 / 56.0, 1e-12));
        assert_eq!(pass_hat_k(5, 2, 3), Some(0.0));
        assert_eq!(pass_hat_k(5, 5, 5), Some(1.0));
        assert_eq!(pass_hat_k(2, 2, 3), None);
    }

    #[test]
    fn means_over_tasks() {
        let tasks = [(4, 2), (4, 4), (4, 0)];
        let at2 = mean_over_tasks(&tasks, 2, pass_at_k).unwrap();
        assert!(close(at2, (5.0 / 6.0 + 1.0 + 0.0) / 3.0, 1e-12));
        let hat2 = mean_over_tasks(&tasks, 2, pass_hat_k).unwrap();
        assert!(close(hat2, (1.0 / 6.0 + 1.0 + 0.0) / 3.0, 1e-12));
        assert_eq!(mean_over_tasks(&tasks, 5, pass_at_k), None);
        assert_eq!(mean_over_tasks(&[], 1, pass_at_k), None);
    }
}
