use super::*;

/// Runs from the law at `ns`, `reps` each, within ±3% of it.
fn synthetic(law: Law, ns: &[f64], reps: usize, seed: u64) -> Vec<Cores> {
    let mut rng = fastrand::Rng::with_seed(seed);
    ns.iter()
        .map(|&n| Cores {
            n,
            runs: (0..reps)
                .map(|_| law.throughput(n) * (1.0 + 0.06 * (rng.f64() - 0.5)))
                .collect(),
        })
        .collect()
}

fn within(got: f64, want: f64, share: f64) -> bool {
    (got - want).abs() <= share * want.abs()
}

/// Every core count from 1 to 32, 3 runs each, within ±3%: κ within 10%,
/// the peak within a core, over 20 noise draws each, by every method but
/// gcp (whose X(1) carries its noise into every point: the one reason
/// not to use it). σ within 10% by `relative`; `nls` weighs the points
/// where X is largest, many cores, and σ is set by the first few, so
/// within 12% (the worst of these 80 draws: 10.8%, at σ = 0.05). (With 1
/// to 16 cores the same noise moves κ by up to 15–23% where the peak
/// lies at or past 16: the data, not the fit, then say less.)
#[test]
fn known_laws_are_recovered_through_3_percent_noise() {
    let ns: Vec<f64> = (1..=32).map(f64::from).collect();
    let laws = [
        (1000.0, 0.1, 0.004),
        (250_000.0, 0.2, 0.02),
        (1.7e6, 0.3, 0.01),
        (1e6, 0.05, 0.002),
    ];
    for method in [Method::Nls, Method::Relative] {
        for (i, &(lambda, sigma, kappa)) in laws.iter().enumerate() {
            let law = Law {
                lambda,
                sigma,
                kappa,
            };
            for seed in 0..20 {
                let fit = fit_with(&synthetic(law, &ns, 3, 17 * i as u64 + seed), method).unwrap();
                let got = fit.law;
                let say = format!("{method} {law:?} seed {seed}: {got:?}");
                let sigma_share = if method == Method::Nls { 0.12 } else { 0.1 };
                assert!(within(got.sigma, sigma, sigma_share), "{say}");
                assert!(within(got.kappa, kappa, 0.1), "{say}");
                assert!(within(got.lambda, lambda, 0.05), "{say}");
                let (peak, want) = (got.peak().unwrap(), law.peak().unwrap());
                assert!((peak - want).abs() <= 1.0, "peak {peak} vs {want}");
                assert!(fit.r2 > 0.9, "{}", fit.r2);
                assert_eq!(fit.observations, 96);
                let iv = fit.intervals.unwrap();
                assert!(iv.sigma.0 <= got.sigma && got.sigma <= iv.sigma.1, "{iv:?}");
                assert!(iv.kappa.0 <= got.kappa && got.kappa <= iv.kappa.1, "{iv:?}");
                let se = fit.se;
                assert!(se.sigma.unwrap() > 0.0 && se.kappa.unwrap() > 0.0, "{se:?}");
            }
        }
    }
}

#[test]
fn a_linear_series_has_neither_contention_nor_coherency() {
    let series: Vec<Cores> = [1.0, 2.0, 4.0, 8.0]
        .iter()
        .map(|&n| Cores {
            n,
            runs: vec![5000.0 * n],
        })
        .collect();
    for method in Method::ALL.iter().copied() {
        let fit = fit_with(&series, method).unwrap();
        let l = fit.law;
        assert!(l.sigma.abs() < 1e-6 && l.kappa < 1e-8, "{method}: {l:?}");
        assert!(within(l.lambda, 5000.0, 1e-6), "{method}: {l:?}");
        assert!(fit.r2 > 0.999_999);
        assert_eq!(fit.intervals, None, "one run per point: no interval");
    }
}

#[test]
fn too_few_points_or_a_non_physical_fit_cannot_be_fitted() {
    let nls = |points: &[(f64, f64)]| fit_points(points, Method::Nls);
    let e = nls(&[(1.0, 100.0), (2.0, 190.0)]).unwrap_err();
    assert!(
        e.starts_with("cannot fit") && e.contains("2 core counts"),
        "{e}"
    );
    // The same core count twice is still one.
    let e = nls(&[(1.0, 1.0), (1.0, 1.1), (2.0, 2.0)]).unwrap_err();
    assert!(e.contains("2 core counts"), "{e}");
    // Each added core costs: σ ≥ 1, by every method.
    let falling = [(1.0, 100.0), (2.0, 40.0), (4.0, 20.0), (8.0, 10.0)];
    for method in Method::ALL.iter().copied() {
        let e = fit_points(&falling, method).unwrap_err();
        assert!(
            e.contains("non-physical") && e.contains("σ"),
            "{method}: {e}"
        );
    }
    assert!(fit(&[]).is_err());
    // gcp needs X(1).
    let e = fit_points(&[(2.0, 2.0), (4.0, 3.5), (8.0, 5.0)], Method::Gcp).unwrap_err();
    assert!(e.contains("N = 1"), "{e}");
}

/// 3× per doubling, which the old estimator refused as superlinear:
/// three points, three parameters, an exact superlinear law.
#[test]
fn a_superlinear_series_is_fitted_with_a_negative_sigma() {
    let f = fit_points(&[(1.0, 100.0), (2.0, 300.0), (4.0, 900.0)], Method::Nls).unwrap();
    let l = f.law;
    // X(2) = 2λ/(1 + σ + 2κ) = 300 and X(4) = 4λ/(1 + 3σ + 12κ) = 900.
    assert!(within(l.lambda, 100.0, 1e-6), "{l:?}");
    assert!(within(l.kappa, 2.0 / 27.0, 1e-6), "{l:?}");
    assert!(within(l.sigma, -13.0 / 27.0, 1e-6), "{l:?}");
    assert!(l.superlinear());
    assert!(within(l.payback().unwrap(), 6.5, 1e-6), "{l:?}");
    assert!(
        in_words(&l).starts_with("superlinear: σ = -0.481 < 0"),
        "{}",
        in_words(&l)
    );
}

/// X(N) < λN exactly past −σ/κ, and above before it.
#[test]
fn the_payback_point_is_where_the_curve_meets_the_linear_ideal() {
    let law = Law {
        lambda: 10.0,
        sigma: -0.04,
        kappa: 0.0015,
    };
    let back = law.payback().unwrap();
    assert!(within(back, 0.04 / 0.0015, 1e-12));
    for n in [2.0, 10.0, 26.0] {
        assert!(law.throughput(n) > law.lambda * n, "{n}");
    }
    for n in [27.0, 40.0, 100.0] {
        assert!(law.throughput(n) < law.lambda * n, "{n}");
    }
    assert!((law.throughput(back) - law.lambda * back).abs() < 1e-9);
    let flat = Law { kappa: 0.0, ..law };
    assert_eq!(flat.payback(), None);
    assert!(in_words(&flat).contains("stays above the linear ideal"));
}

/// The figures measured on 16 cores (rwlock store, uring, pipelined):
/// a peak near 2 cores, by every method.
#[test]
fn the_measured_rwlock_collapse_peaks_near_two_cores() {
    let points = [(1.0, 1.73e6), (2.0, 2.26e6), (4.0, 1.76e6), (8.0, 1.23e6)];
    for method in Method::ALL.iter().copied() {
        let fit = fit_points(&points, method).unwrap();
        let peak = fit.law.peak().unwrap();
        assert!((1.5..3.0).contains(&peak), "{method}: {fit:?} peak {peak}");
    }
}

#[test]
fn numbers_are_said_to_their_significant_digits() {
    assert_eq!(significant(0.027_728_5, 4), "0.02773");
    assert_eq!(significant(89.995_233, 7), "89.99523");
    assert_eq!(significant(0.000_104_4, 4), "1.044e-4");
    assert_eq!(significant(1884.0, 4), "1884");
    assert_eq!(significant(-0.04, 3), "-0.0400");
}
