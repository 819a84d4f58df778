// source: written for this suite
{
    use ndarray::prelude::*;

    let data = array![
        [170.0, 65.0, 30.0],
        [160.0, 55.0, 25.0],
        [180.0, 80.0, 40.0],
        [175.0, 72.0, 35.0],
        [165.0, 60.0, 28.0]
    ];
    let mean = data.mean_axis(Axis(0)).unwrap();
    let std = data.std_axis(Axis(0), 1.0);
    println!("mean = {:.6}", mean);
    println!("std = {:.6}", std);

    let z = (&data - &mean) / &std;
    println!("{:.6}", z);
    println!("column means after = {:.6}", z.mean_axis(Axis(0)).unwrap().mapv(|v: f64| v.abs()));
    println!("column std after = {:.6}", z.std_axis(Axis(0), 1.0));
}
