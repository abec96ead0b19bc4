/// Several transformers applied in order (SDWebImage's `SDImagePipelineTransformer`). The key
/// joins theirs with commas, which is also the spec that parses back to the pipeline.
public struct PipelineTransformer: ImageTransformer {
    /// The transformers, first applied first.
    public var transformers: [any ImageTransformer]

    /// Creates a pipeline.
    public init(_ transformers: [any ImageTransformer]) {
        self.transformers = transformers
    }

    public var transformerKey: String { transformers.map(\.transformerKey).joined(separator: ",") }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        var image = image
        for transformer in transformers {
            guard let next = transformer.transform(image, forKey: key) else { return nil }
            image = next
        }
        return image
    }
}
