import CCurl
import TureenStore

/// The sync engine's home. Sync down/up arrive with the sync issue; until then
/// this target only proves that libcurl links and initialises.
public enum HTTPRuntime {
    /// libcurl's global init is not thread-safe before 7.84; doing it once,
    /// eagerly, from a Swift lazy global keeps later threads from racing it.
    public static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}
