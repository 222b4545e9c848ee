/// The API the runtime answers: whoever imports the runtime speaks it.
@_exported import HostAPI
