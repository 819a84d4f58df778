// source: written for this suite
{
    use ndarray::prelude::*;

    let prices = array![10.0, 11.0, 12.5, 12.0, 13.5, 15.0, 14.0, 13.0, 12.5, 14.5];
    let window = 3;
    let ma: Array1<f64> = prices.windows(window).into_iter().map(|w| w.mean().unwrap()).collect();
    println!("{:.6}", ma);

    // the same by hand with slices
    let n = prices.len() - window + 1;
    let ma2 = Array1::from_shape_fn(n, |i| prices.slice(s![i..i + window]).sum() / window as f64);
    println!("{:.6}", ma2);

    // exponential moving average
    let alpha = 0.5;
    let mut ema = Array1::<f64>::zeros(prices.len());
    ema[0] = prices[0];
    for i in 1..prices.len() {
        ema[i] = alpha * prices[i] + (1.0 - alpha) * ema[i - 1];
    }
    println!("{:.6}", ema);

    // differences between consecutive prices
    let diff = &prices.slice(s![1..]) - &prices.slice(s![..-1]);
    println!("{}", diff);
}
