// source: written for this suite
{
    use ndarray::prelude::*;

    let temps = array![[12.5, 18.0, 22.1, 25.3], [30.2, 28.4, 15.0, 9.8], [21.0, 21.5, 33.3, 19.9]];
    let threshold = 21.0;
    let n = temps.iter().filter(|&&t| t > threshold).count();
    println!("{} of {} above {}", n, temps.len(), threshold);

    let mask = temps.mapv(|t| t > threshold);
    println!("{}", mask);

    let per_row = temps.map_axis(Axis(1), |row| row.iter().filter(|&&t| t > threshold).count());
    println!("{}", per_row);

    let hot: Vec<(usize, usize)> = temps
        .indexed_iter()
        .filter(|(_, t)| **t > 25.0)
        .map(|(idx, _)| idx)
        .collect();
    println!("{:?}", hot);

    let fraction = temps.mapv(|t| if t > threshold { 1.0f64 } else { 0.0 }).mean().unwrap();
    println!("{:.6}", fraction);
}
