extension ContinuousClock.Instant {
    /// The seconds from `start` to this instant.
    func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = self - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
