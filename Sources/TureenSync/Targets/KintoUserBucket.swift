import TureenStore
import TureenCore

extension RestTarget {
    /// For a target on Kinto's bucket "default", the collection's records
    /// URL in the signed-in user's own bucket; nil for any other target, or
    /// when the server root does not name that bucket. The default_bucket
    /// plugin serves "default" as an alias, and the next-page links it
    /// writes name the real bucket by its id, which only the root gives
    /// ("user.bucket"): asked the first time a link needs it, then kept.
    func userBucketRecordsURL() throws -> String? {
        guard let collection = config.defaultBucketCollection, let root = config.serverRoot else { return nil }
        if let known = userBucketURL { return known }
        let r = try send(HTTPRequest(method: "GET", url: root))
        guard r.isSuccess, let id = (try? r.json())?.at("user.bucket")?.stringValue, !id.isEmpty else { return nil }
        let url = "\(root)buckets/\(URLText.component(id))/collections/\(URLText.component(collection))/records"
        userBucketURL = url
        return url
    }
}
