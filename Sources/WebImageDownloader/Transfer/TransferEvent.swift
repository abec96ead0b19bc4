/// What the downloader's shared transfer tells each caller subscribed to it: the load's events,
/// then exactly one ``finished(_:)``, unless the caller left first.
package enum TransferEvent: Sendable {
    case update(LoadEvent)
    case finished(Result<LoadedData, WebImageError>)
}
