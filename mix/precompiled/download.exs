# An archive over HTTPS (mix/precompiled.exs loads this file): only https://, with the operating
# system's CA certificates, peer verification and a hostname check; redirects followed here (at
# most @max_redirects), and only to https://. What the bytes are worth is for the caller to
# check against the project's own checksum.exs. Calls Files.
defmodule HexagonTpu.Mix.Precompiled.Download do
  @moduledoc false

  alias HexagonTpu.Mix.Precompiled.Files

  @max_redirects 5

  # {:ok, body} or {:error, message naming the URL}.
  def get(url) do
    Mix.shell().info("hexagon_tpu: downloading #{url}")
    Files.ensure_otp_apps([:crypto, :asn1, :public_key, :ssl, :inets])
    {:ok, _} = Application.ensure_all_started(:inets)
    {:ok, _} = Application.ensure_all_started(:ssl)
    get(url, url, @max_redirects)
  end

  # Redirects are followed here, not by httpc: httpc would follow one from https:// to http://
  # and fetch the archive in clear text.
  defp get(url, first, redirects_left) do
    # OTP 25+: the operating system's CA certificates
    ssl = [
      verify: :verify_peer,
      cacerts: :public_key.cacerts_get(),
      customize_hostname_check: [match_fun: :public_key.pkix_verify_hostname_match_fun(:https)]
    ]

    http = [ssl: ssl, timeout: 120_000, connect_timeout: 15_000, autoredirect: false]

    case :httpc.request(:get, {String.to_charlist(url), []}, http, body_format: :binary) do
      {:ok, {{_, 200, _}, _headers, body}} ->
        {:ok, body}

      {:ok, {{_, status, _}, headers, _body}} when status in [301, 302, 303, 307, 308] ->
        with {:ok, next} <- redirect_target(url, headers) do
          if redirects_left > 0,
            do: get(next, first, redirects_left - 1),
            else: {:error, "download of #{first} failed: more than #{@max_redirects} redirects"}
        end

      {:ok, {{_, status, _}, _headers, _body}} ->
        {:error, "download of #{url} failed: HTTP #{status}"}

      {:error, reason} ->
        {:error, "download of #{url} failed: #{inspect(reason)}"}
    end
  end

  defp redirect_target(url, headers) do
    case for({k, v} <- headers, String.downcase(to_string(k)) == "location", do: to_string(v)) do
      [location | _] ->
        next = url |> URI.merge(location) |> URI.to_string()

        case URI.parse(next) do
          %URI{scheme: "https"} ->
            {:ok, next}

          _ ->
            {:error, "#{url} redirects to #{next}: refused, only https:// is followed"}
        end

      [] ->
        {:error, "download of #{url} failed: a redirect without a location"}
    end
  end
end
